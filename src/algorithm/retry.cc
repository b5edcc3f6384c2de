// Copyright 2026 The redlock Authors.

#include "src/algorithm/retry.h"

#include <cstdint>

#include "absl/random/distributions.h"
#include "src/algorithm/clock.h"

namespace redlock::internal {

absl::Duration JitteredDelay(const RetryPolicy& policy, absl::BitGenRef gen) {
  const int64_t lo = absl::ToInt64Microseconds(policy.min_delay);
  const int64_t hi = absl::ToInt64Microseconds(policy.max_delay);
  if (hi <= lo) return policy.min_delay;
  return absl::Microseconds(
      absl::Uniform(absl::IntervalClosedClosed, gen, lo, hi));
}

RetrySchedule::RetrySchedule(const RetryPolicy& policy, MonotonicTime start,
                             absl::Duration wait)
    : policy_(policy), deadline_(start + ToChrono(wait)) {}

std::optional<absl::Duration> RetrySchedule::NextDelay(MonotonicTime now,
                                                       absl::BitGenRef gen) {
  ++attempts_;
  if (policy_.max_attempts > 0 && attempts_ >= policy_.max_attempts) {
    return std::nullopt;
  }
  if (now >= deadline_) return std::nullopt;
  absl::Duration delay = JitteredDelay(policy_, gen);
  // An attempt that could only start after the budget ends is not made.
  if (now + ToChrono(delay) >= deadline_) return std::nullopt;
  return delay;
}

std::optional<absl::Duration> RetrySchedule::WaitLeft(MonotonicTime now) const {
  if (policy_.max_attempts > 0 && attempts_ >= policy_.max_attempts) {
    return std::nullopt;
  }
  if (now >= deadline_) return std::nullopt;
  return ToDuration(deadline_ - now);
}

}  // namespace redlock::internal
