// Copyright 2026 The redlock Authors.

#include "src/algorithm/retry.h"

#include <random>

#include "absl/random/random.h"
#include "gtest/gtest.h"
#include "src/algorithm/clock.h"

namespace redlock::internal {
namespace {

MonotonicTime At(int ms) {
  return MonotonicTime{std::chrono::milliseconds(ms)};
}

TEST(JitteredDelayTest, StaysWithinTheConfiguredRange) {
  RetryPolicy policy;
  policy.min_delay = absl::Milliseconds(20);
  policy.max_delay = absl::Milliseconds(60);
  absl::BitGen gen;
  absl::Duration lo = absl::InfiniteDuration(), hi = absl::ZeroDuration();
  for (int i = 0; i < 2000; ++i) {
    absl::Duration d = JitteredDelay(policy, gen);
    ASSERT_GE(d, policy.min_delay);
    ASSERT_LE(d, policy.max_delay);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  // Jitter really spreads the delays (not a constant).
  EXPECT_LT(lo, absl::Milliseconds(25));
  EXPECT_GT(hi, absl::Milliseconds(55));
}

TEST(JitteredDelayTest, EqualBoundsGiveThatDelay) {
  RetryPolicy policy;
  policy.min_delay = policy.max_delay = absl::Milliseconds(7);
  absl::BitGen gen;
  EXPECT_EQ(JitteredDelay(policy, gen), absl::Milliseconds(7));
}

TEST(RetryScheduleTest, ZeroWaitMakesExactlyOneAttempt) {
  RetrySchedule schedule(RetryPolicy(), At(0), absl::ZeroDuration());
  absl::BitGen gen;
  EXPECT_FALSE(schedule.NextDelay(At(1), gen).has_value());
  EXPECT_EQ(schedule.attempts(), 1);
}

TEST(RetryScheduleTest, RetriesWhileTheNextAttemptStartsInsideTheBudget) {
  RetryPolicy policy;
  policy.min_delay = policy.max_delay = absl::Milliseconds(50);
  RetrySchedule schedule(policy, At(0), absl::Milliseconds(200));
  absl::BitGen gen;
  EXPECT_EQ(schedule.NextDelay(At(10), gen), absl::Milliseconds(50));
  EXPECT_EQ(schedule.NextDelay(At(100), gen), absl::Milliseconds(50));
  // 160 + 50 would start after the budget (200) ends.
  EXPECT_FALSE(schedule.NextDelay(At(160), gen).has_value());
  EXPECT_EQ(schedule.attempts(), 3);
}

TEST(RetryScheduleTest, StopsAtMaxAttemptsEvenWithBudgetLeft) {
  RetryPolicy policy;
  policy.max_attempts = 2;
  RetrySchedule schedule(policy, At(0), absl::Hours(1));
  absl::BitGen gen;
  EXPECT_TRUE(schedule.NextDelay(At(1), gen).has_value());
  EXPECT_FALSE(schedule.NextDelay(At(2), gen).has_value());
}

TEST(RetryScheduleTest, GivesUpOnceTheBudgetHasPassed) {
  RetrySchedule schedule(RetryPolicy(), At(0), absl::Seconds(1));
  absl::BitGen gen;
  EXPECT_FALSE(schedule.NextDelay(At(1000), gen).has_value());
}

}  // namespace
}  // namespace redlock::internal
