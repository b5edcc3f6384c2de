// Copyright 2026 The redlock Authors.
//
// The monotonic clock behind every safety decision (MonotonicClock, i.e.
// BootClock: CLOCK_BOOTTIME), behind an interface so tests can drive time by
// hand.

#ifndef REDLOCK_SRC_ALGORITHM_CLOCK_H_
#define REDLOCK_SRC_ALGORITHM_CLOCK_H_

#include <string>

#include "absl/time/time.h"
#include "redlock/lock.h"

namespace redlock::internal {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonotonicTime Now() = 0;

  // The process-wide MonotonicClock (CLOCK_BOOTTIME). Never null, never
  // destroyed.
  static Clock* Real();
};

// For tests only: moves every later MonotonicClock::now() reading `d` further
// ahead, as a suspension of the machine for `d` does (CLOCK_BOOTTIME jumps,
// std::chrono::steady_clock does not). Zero and negative `d` do nothing: the
// clock never goes back. Thread-safe; process-wide and permanent.
void SimulateSuspensionForTesting(absl::Duration d);

inline absl::Duration ToDuration(MonotonicClock::duration d) {
  return absl::FromChrono(d);
}
inline MonotonicClock::duration ToChrono(absl::Duration d) {
  return std::chrono::duration_cast<MonotonicClock::duration>(
      absl::ToChronoNanoseconds(d));
}

// A measured duration the way a person reads it, for messages: three
// significant digits ("957ms", "1.23s", "613us", "9.57ms"), where
// absl::FormatDuration() would print "956.466802ms". Zero and negative
// durations print as absl::FormatDuration() does. Pure.
std::string ReadableDuration(absl::Duration d);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_CLOCK_H_
