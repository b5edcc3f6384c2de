// Copyright 2026 The redlock Authors.
//
// Assertions on absl::Status for the tests.

#ifndef REDLOCK_TESTS_SUPPORT_STATUS_ASSERTIONS_H_
#define REDLOCK_TESTS_SUPPORT_STATUS_ASSERTIONS_H_

#include <initializer_list>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace redlock::testing {

// kInvalidArgument whose message contains every one of `pieces`.
inline ::testing::AssertionResult IsInvalidArgument(
    const absl::Status& status,
    std::initializer_list<absl::string_view> pieces) {
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure()
           << "expected kInvalidArgument, got " << status;
  }
  for (absl::string_view piece : pieces) {
    if (!absl::StrContains(status.message(), piece)) {
      return ::testing::AssertionFailure() << "message \"" << status.message()
                                           << "\" lacks \"" << piece << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_STATUS_ASSERTIONS_H_
