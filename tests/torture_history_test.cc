// Copyright 2026 The redlock Authors.
//
// The torture checker's fence-token checks (tools/torture/history.h) on
// made-up histories: a checker that cannot fail proves nothing.

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/torture/history.h"

namespace redlock::torture {
namespace {

using ::testing::HasSubstr;

// A won lock on `resource` whose acquisition ran from `start` to `ret` (ns).
Section Won(int client, const std::string& resource, int64_t fence,
            int64_t start, int64_t ret) {
  Section x;
  x.client = client;
  x.resource = resource;
  x.fence = fence;
  x.start = start;
  x.ret = ret;
  x.valid_until = ret + 1000;
  return x;
}

Summary Check(const std::vector<Section>& sections) {
  Summary s;
  CheckFenceTokens(sections, &s);
  return s;
}

TEST(CheckFenceTokensTest, TokensGrowingInRealTimeOrderAreClean) {
  const Summary s = Check({
      Won(0, "r0", 1, 0, 10),
      Won(1, "r0", 2, 20, 30),
      Won(2, "r0", 4, 40, 50),
      // Overlaps the one before: ordered after the first two only.
      Won(3, "r0", 3, 45, 60),
      Won(0, "r0", 7, 70, 80),
  });
  EXPECT_EQ(s.fence_order, 0);
  EXPECT_EQ(s.fence_duplicate, 0);
  EXPECT_EQ(s.violations(), 0);
  EXPECT_TRUE(s.marks.empty());
  EXPECT_TRUE(s.details.empty());
}

TEST(CheckFenceTokensTest, SmallerTokenAfterAnotherReturnedIsCounted) {
  const Summary s = Check({
      Won(0, "r0", 5, 0, 10),
      Won(1, "r0", 3, 20, 30),
  });
  EXPECT_EQ(s.fence_order, 1);
  EXPECT_EQ(s.fence_duplicate, 0);
  EXPECT_EQ(s.violations(), 1);
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].kind, "fence order");
  EXPECT_EQ(s.marks[0].resource, "r0");
  EXPECT_EQ(s.marks[0].start, 20);
  EXPECT_EQ(s.marks[0].end, 30);
  ASSERT_EQ(s.details.size(), 1u);
  EXPECT_THAT(s.details[0], HasSubstr("client 1 got fence 3"));
  EXPECT_THAT(s.details[0], HasSubstr("client 0's fence 5"));
}

TEST(CheckFenceTokensTest, EqualTokenAfterAnotherReturnedIsCounted) {
  const Summary s = Check({
      Won(0, "r0", 5, 0, 10),
      Won(1, "r0", 5, 20, 30),
  });
  EXPECT_EQ(s.fence_order, 1);
  // The same token twice is also a duplicate: both properties are broken.
  EXPECT_EQ(s.fence_duplicate, 1);
  EXPECT_EQ(s.violations(), 2);
}

TEST(CheckFenceTokensTest, OverlappingAcquisitionsMayGetTokensInEitherOrder) {
  // Neither returned before the other started: no real-time order to keep.
  const Summary s = Check({
      Won(0, "r0", 7, 0, 20),
      Won(1, "r0", 6, 10, 30),
  });
  EXPECT_EQ(s.fence_order, 0);
  EXPECT_EQ(s.fence_duplicate, 0);
  EXPECT_EQ(s.violations(), 0);
}

TEST(CheckFenceTokensTest, StartingTheInstantAnotherReturnsIsNotOrdered) {
  // "After" is strict: equal times do not order two events.
  const Summary s = Check({
      Won(0, "r0", 7, 0, 20),
      Won(1, "r0", 6, 20, 30),
  });
  EXPECT_EQ(s.fence_order, 0);
}

TEST(CheckFenceTokensTest, ComparesWithTheLargestTokenReturnedBefore) {
  // The third is larger than the second but not than the first, which had
  // returned before it started too.
  const Summary s = Check({
      Won(0, "r0", 9, 0, 10),
      Won(1, "r0", 3, 20, 30),
      Won(2, "r0", 5, 40, 50),
  });
  EXPECT_EQ(s.fence_order, 2);
  ASSERT_EQ(s.details.size(), 2u);
  EXPECT_THAT(s.details[1], HasSubstr("client 2 got fence 5"));
  EXPECT_THAT(s.details[1], HasSubstr("client 0's fence 9"));
}

TEST(CheckFenceTokensTest, DuplicatedTokenIsCounted) {
  // Overlapping in time, so only the duplicate is a violation.
  const Summary s = Check({
      Won(0, "r0", 4, 0, 20),
      Won(1, "r0", 4, 10, 30),
  });
  EXPECT_EQ(s.fence_duplicate, 1);
  EXPECT_EQ(s.fence_order, 0);
  EXPECT_EQ(s.violations(), 1);
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].kind, "fence duplicate");
}

TEST(CheckFenceTokensTest, EachReissueOfATokenCountsOnce) {
  const Summary s = Check({
      Won(0, "r0", 4, 0, 50),
      Won(1, "r0", 4, 10, 60),
      Won(2, "r0", 4, 20, 70),
      Won(3, "r0", 8, 30, 80),
  });
  EXPECT_EQ(s.fence_duplicate, 2);
  EXPECT_EQ(s.fence_order, 0);
}

TEST(CheckFenceTokensTest, SectionsWithoutTokensAreIgnored) {
  const Summary s = Check({
      Won(0, "r0", 0, 0, 10),
      Won(1, "r0", 0, 20, 30),
      Won(2, "r0", 2, 40, 50),
      Won(3, "r0", 0, 60, 70),
  });
  EXPECT_EQ(s.violations(), 0);
}

TEST(CheckFenceTokensTest, ResourcesAreJudgedApart) {
  const Summary s = Check({
      Won(0, "r0", 5, 0, 10),
      Won(1, "r1", 5, 20, 30),
      Won(2, "r1", 6, 40, 50),
      Won(3, "r0", 6, 60, 70),
  });
  EXPECT_EQ(s.violations(), 0);
}

TEST(CheckFenceTokensTest, ManySectionsInAnyRecordOrder) {
  // Tens of thousands of sections: fast only if the check is not quadratic.
  // Recorded newest first, as merged client files may list them.
  std::vector<Section> v;
  const int n = 50000;
  for (int i = n; i >= 1; --i) {
    v.push_back(Won(i % 8, "r0", i, int64_t{i} * 100, int64_t{i} * 100 + 50));
  }
  EXPECT_EQ(Check(v).violations(), 0);
  // One late comer with a token from before everything.
  v.push_back(
      Won(9, "r0", 1000, int64_t{n + 1} * 100, int64_t{n + 1} * 100 + 1));
  const Summary s = Check(v);
  EXPECT_EQ(s.fence_order, 1);
  EXPECT_EQ(s.fence_duplicate, 1);
}

// Through the files, so that the new kinds reach the total that decides a
// run's verdict and the summary a person reads.
TEST(CheckHistoryTest, FenceOrderViolationCountsInTheTotal) {
  std::string dir = testing::TempDir() + "/torture_history_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  {
    // heal=0: no liveness check; LEFTCHECK: the leftover-key check ran;
    // valid_until before the next acquisition: no mutual-exclusion
    // violation. Only the fence order is left to count.
    std::ofstream(dir + "/nemesis.log")
        << "RUN t0=0 end=1000 heal=0 ttl_ms=1 retry_max_ms=1 resources=r0\n"
        << "LEFTCHECK masters=3 t=900\n";
    std::ofstream(dir + "/client-0.log")
        << "ACQ c=0 s=0 res=r0 token=a fence=5 start=100 ret=200 vu=300 "
           "votes=ggg\n"
        << "ACQ c=0 s=1 res=r0 token=b fence=3 start=400 ret=500 vu=600 "
           "votes=ggg\n";
  }
  absl::StatusOr<History> h = CheckHistory(dir);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->summary.mutual_exclusion, 0);
  EXPECT_EQ(h->summary.fence_order, 1);
  EXPECT_EQ(h->summary.fence_duplicate, 0);
  EXPECT_EQ(h->summary.violations(), 1);
  EXPECT_THAT(FormatSummary(h->summary),
              HasSubstr("fence tokens out of real-time order"));
}

}  // namespace
}  // namespace redlock::torture
