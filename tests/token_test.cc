// Copyright 2026 The redlock Authors.

#include "src/token.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace redlock::internal {
namespace {

TEST(NewTokenTest, Is32LowercaseHexDigits) {
  absl::StatusOr<std::string> token = NewToken();
  ASSERT_TRUE(token.ok()) << token.status();
  ASSERT_EQ(token->size(), 32u);
  for (char c : *token) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << *token;
  }
}

TEST(NewTokenTest, TenThousandTokensAreAllDistinct) {
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    absl::StatusOr<std::string> token = NewToken();
    ASSERT_TRUE(token.ok()) << token.status();
    EXPECT_TRUE(seen.insert(*token).second) << "repeated: " << *token;
  }
}

TEST(NewTokenTest, EveryHexDigitPositionVaries) {
  // A constant prefix or suffix (a counter, a time stamp) would show here.
  std::string first = *NewToken();
  std::vector<bool> varied(32, false);
  for (int i = 0; i < 200; ++i) {
    std::string next = *NewToken();
    for (int p = 0; p < 32; ++p) varied[p] = varied[p] || next[p] != first[p];
  }
  for (int p = 0; p < 32; ++p) EXPECT_TRUE(varied[p]) << "position " << p;
}

}  // namespace
}  // namespace redlock::internal
