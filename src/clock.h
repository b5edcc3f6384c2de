// Copyright 2026 The redlock Authors.
//
// The monotonic clock behind every safety decision, behind an interface so
// tests can drive time by hand.

#ifndef REDLOCK_SRC_CLOCK_H_
#define REDLOCK_SRC_CLOCK_H_

#include "absl/time/time.h"
#include "redlock/lock.h"

namespace redlock::internal {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonotonicTime Now() = 0;

  // The process-wide steady clock. Never null, never destroyed.
  static Clock* Real();
};

inline absl::Duration ToDuration(MonotonicClock::duration d) {
  return absl::FromChrono(d);
}
inline MonotonicClock::duration ToChrono(absl::Duration d) {
  return std::chrono::duration_cast<MonotonicClock::duration>(
      absl::ToChronoNanoseconds(d));
}

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_CLOCK_H_
