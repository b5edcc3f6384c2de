// Copyright 2026 The redlock Authors.

#include "src/clock.h"

namespace redlock::internal {
namespace {

class RealClock final : public Clock {
 public:
  MonotonicTime Now() override { return MonotonicClock::now(); }
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace redlock::internal
