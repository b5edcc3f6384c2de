// Copyright 2026 The redlock Authors.

#include "src/algorithm/validity.h"

#include "gtest/gtest.h"
#include "src/algorithm/clock.h"

namespace redlock::internal {
namespace {

TEST(DriftTest, IsOnePercentOfTtlPlusTwoMilliseconds) {
  EXPECT_EQ(Drift(absl::Seconds(10), 0.01), absl::Milliseconds(102));
  EXPECT_EQ(Drift(absl::Seconds(1), 0.01), absl::Milliseconds(12));
}

TEST(DriftTest, ZeroFactorLeavesTheTwoMillisecondMinimum) {
  EXPECT_EQ(Drift(absl::Seconds(30), 0.0), kMinDrift);
  EXPECT_EQ(kMinDrift, absl::Milliseconds(2));
}

TEST(ValidUntilTest, IsStartPlusTtlMinusDrift) {
  MonotonicTime start{std::chrono::seconds(1000)};
  MonotonicTime until = ValidUntil(start, absl::Seconds(10), 0.01);
  EXPECT_EQ(ToDuration(until - start), absl::Milliseconds(10000 - 102));
}

// Only the formula. That a round measures validity from its start, not from
// when quorum came, is
// QuorumRoundTest.ValidityIsMeasuredFromTheStartOfTheRound.
TEST(ValidUntilTest, SubtractsTheDriftOfTheGivenFactor) {
  MonotonicTime start{std::chrono::seconds(5)};
  // 2s * 5% + 2ms, not the default 1%'s 22ms.
  EXPECT_EQ(ValidUntil(start, absl::Seconds(2), 0.05),
            start + ToChrono(absl::Seconds(2) - absl::Milliseconds(102)));
}

TEST(RemainingTest, IsNegativeAfterValidityEnds) {
  MonotonicTime until{std::chrono::seconds(10)};
  EXPECT_EQ(Remaining(until, until - std::chrono::milliseconds(3)),
            absl::Milliseconds(3));
  EXPECT_EQ(Remaining(until, until + std::chrono::milliseconds(3)),
            absl::Milliseconds(-3));
}

TEST(HasValidityTest, RequiresStrictlyMoreThanMinimum) {
  MonotonicTime until{std::chrono::seconds(10)};
  MonotonicTime now = until - std::chrono::milliseconds(5);
  EXPECT_TRUE(HasValidity(until, now, absl::ZeroDuration()));
  EXPECT_TRUE(HasValidity(until, now, absl::Milliseconds(4)));
  EXPECT_FALSE(HasValidity(until, now, absl::Milliseconds(5)));
  EXPECT_FALSE(HasValidity(until, until, absl::ZeroDuration()));
}

TEST(HasValidityTest, QuorumReachedAfterTheWholeTtlHasNone) {
  MonotonicTime start{std::chrono::seconds(1)};
  MonotonicTime until = ValidUntil(start, absl::Milliseconds(100), 0.01);
  // 100ms - 3ms drift: quorum at 97ms leaves nothing.
  EXPECT_TRUE(HasValidity(until, start + std::chrono::milliseconds(96),
                          absl::ZeroDuration()));
  EXPECT_FALSE(HasValidity(until, start + std::chrono::milliseconds(97),
                           absl::ZeroDuration()));
}

}  // namespace
}  // namespace redlock::internal

namespace redlock::internal {
namespace {

TEST(ReadableDurationTest, MeasuredDurationsKeepThreeSignificantDigits) {
  EXPECT_EQ(ReadableDuration(absl::Nanoseconds(956466802)), "956ms");
  EXPECT_EQ(ReadableDuration(absl::Nanoseconds(612679)), "613us");
  EXPECT_EQ(ReadableDuration(absl::Microseconds(9567)), "9.57ms");
  EXPECT_EQ(ReadableDuration(absl::Milliseconds(1234)), "1.23s");
  EXPECT_EQ(ReadableDuration(absl::Milliseconds(50)), "50ms");
  EXPECT_EQ(ReadableDuration(absl::Nanoseconds(42)), "42ns");
}

TEST(ReadableDurationTest, ZeroNegativeAndInfiniteAreAsAbslPrintsThem) {
  EXPECT_EQ(ReadableDuration(absl::ZeroDuration()), "0");
  EXPECT_EQ(ReadableDuration(absl::Milliseconds(-3)), "-3ms");
  EXPECT_EQ(ReadableDuration(absl::InfiniteDuration()), "inf");
}

}  // namespace
}  // namespace redlock::internal
