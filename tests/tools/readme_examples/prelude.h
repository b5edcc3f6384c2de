// Copyright 2026 The redlock Authors.
//
// What README.md's C++ examples take as given: the headers, and the
// application's own functions they call. tests/tools/readme_examples.sh
// includes this ahead of every block.

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "redlock/prometheus.h"
#include "redlock/redlock.h"

// The application's work, which the examples call.
inline void RecalculateRatings(const redlock::Lock& lock) { (void)lock; }
inline void DoTheRest(absl::Duration remaining) { (void)remaining; }
inline absl::Status Encode(const redlock::Lock& permit) {
  (void)permit;
  return absl::OkStatus();
}
// A token another process printed (redlock acquire).
inline const std::string token_from_the_job = "0123456789abcdef";
