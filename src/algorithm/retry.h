// Copyright 2026 The redlock Authors.
//
// When to try an acquisition again. Pure: the caller supplies the time and
// the random source.

#ifndef REDLOCK_SRC_ALGORITHM_RETRY_H_
#define REDLOCK_SRC_ALGORITHM_RETRY_H_

#include <optional>

#include "absl/random/bit_gen_ref.h"
#include "absl/time/time.h"
#include "redlock/lock.h"
#include "redlock/options.h"

namespace redlock::internal {

class RetrySchedule {
 public:
  // `wait` is the caller's budget from `start`; zero means one attempt.
  RetrySchedule(const RetryPolicy& policy, MonotonicTime start,
                absl::Duration wait);

  // Called after an attempt failed at `now`. Returns the delay before the
  // next attempt, or nullopt when the attempt limit is reached or the next
  // attempt would start after the budget ends.
  std::optional<absl::Duration> NextDelay(MonotonicTime now,
                                          absl::BitGenRef gen);

  // Attempts made so far (each NextDelay() call counts the one that failed).
  int attempts() const { return attempts_; }

  // How much of the budget is left at `now` for an attempt that a wake-up
  // (RetryPolicy::wake_on_release) might start before it ends: nullopt if
  // the attempt limit is reached or nothing is left.
  std::optional<absl::Duration> WaitLeft(MonotonicTime now) const;

 private:
  RetryPolicy policy_;
  MonotonicTime deadline_;
  int attempts_ = 0;
};

// A delay drawn uniformly from [policy.min_delay, policy.max_delay].
absl::Duration JitteredDelay(const RetryPolicy& policy, absl::BitGenRef gen);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_RETRY_H_
