// Copyright 2026 The redlock Authors.
//
// Options for tests on local masters: timeouts generous enough for a loaded
// CI machine, reconnects quick, retries short.

#ifndef REDLOCK_TESTS_SUPPORT_TEST_OPTIONS_H_
#define REDLOCK_TESTS_SUPPORT_TEST_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "redlock/options.h"

namespace redlock::testing {

inline Options TestOptions(std::vector<std::string> masters) {
  Options options;
  options.masters = std::move(masters);
  options.request_timeout = absl::Milliseconds(300);
  options.connect_timeout = absl::Milliseconds(500);
  options.stalled_connection_timeout = absl::Seconds(3);
  options.reconnect.initial = absl::Milliseconds(10);
  options.reconnect.max = absl::Milliseconds(100);
  options.retry.min_delay = absl::Milliseconds(5);
  options.retry.max_delay = absl::Milliseconds(20);
  return options;
}

// The state of a deployment marker value ("trusted:1764470000123456" ->
// "trusted"); empty for no marker.
inline std::string MarkerState(const std::optional<std::string>& value) {
  if (!value.has_value()) return "";
  return value->substr(0, value->find(':'));
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_TEST_OPTIONS_H_
