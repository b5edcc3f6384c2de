// Copyright 2026 The redlock Authors.

#include "src/clock.h"

namespace redlock::internal {
namespace {

class RealClock final : public Clock {
 public:
  MonotonicTime Now() override { return MonotonicClock::now(); }
};

}  // namespace

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

}  // namespace redlock::internal
