// Copyright 2026 The redlock Authors.

#include "src/algorithm/clock.h"

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

#ifndef CLOCK_BOOTTIME
#error "redlock measures validity on CLOCK_BOOTTIME (Linux 2.6.39 or later)"
#endif

namespace redlock {
namespace {

// Added to every reading; only SimulateSuspensionForTesting() changes it.
std::atomic<int64_t> suspended_for_testing_ns{0};

}  // namespace

BootClock::time_point BootClock::now() noexcept {
  timespec ts;
  if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0) std::abort();
  const int64_t ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec +
                     suspended_for_testing_ns.load(std::memory_order_relaxed);
  return time_point(
      std::chrono::duration_cast<duration>(std::chrono::nanoseconds(ns)));
}

namespace internal {
namespace {

class RealClock final : public Clock {
 public:
  MonotonicTime Now() override { return MonotonicClock::now(); }
};

}  // namespace

void SimulateSuspensionForTesting(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return;
  suspended_for_testing_ns.fetch_add(absl::ToInt64Nanoseconds(d),
                                     std::memory_order_relaxed);
}

std::string ReadableDuration(absl::Duration d) {
  if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::FormatDuration(d);
  }
  // Round to the unit of the third significant digit.
  absl::Duration unit = absl::Nanoseconds(1);
  while (d >= unit * 1000) unit *= 10;
  return absl::FormatDuration(absl::Floor(d + unit / 2, unit));
}

Clock* Clock::Real() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace internal
}  // namespace redlock
