// Copyright 2026 The redlock Authors.
//
// The torture checker (tools/torture/history.h) on made-up histories, read
// from files or built in memory as the simulator builds them: a checker that
// cannot fail proves nothing. And the history.json it writes.

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/torture/history.h"

namespace redlock::torture {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

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

// ---------------------------------------------------------------- in memory

constexpr int64_t kMs = 1'000'000;

// The violation counters that are not zero, by name: comparing with the
// expected pairs pins every counter at once.
std::map<std::string, int64_t> NonZeroViolations(const Summary& s) {
  const std::map<std::string, int64_t> all = {
      {"mutual_exclusion", s.mutual_exclusion},
      {"reader_with_writer", s.reader_with_writer},
      {"permits_over_limit", s.permits_over_limit},
      {"stale_fenced_accepted", s.stale_fenced_accepted},
      {"fence_order", s.fence_order},
      {"fence_duplicate", s.fence_duplicate},
      {"liveness", s.liveness},
      {"leftovers", s.leftovers},
      {"callbacks", s.callbacks},
      {"view_order", s.view_order},
      {"view_unknown", s.view_unknown},
  };
  std::map<std::string, int64_t> out;
  for (const auto& [name, n] : all) {
    if (n != 0) out[name] = n;
  }
  return out;
}

// A 10s run of resource r0 starting at 1s on the shared clock, TTL 1s,
// retries at most 100ms apart, without faults (heal 0: no liveness check);
// the leftover check ran and found nothing.
History QuietRun() {
  History h;
  h.summary.t0 = 1000 * kMs;
  h.summary.end = h.summary.t0 + 10'000 * kMs;
  h.summary.ttl_ns = 1000 * kMs;
  h.summary.retry_max_ns = 100 * kMs;
  h.summary.leftover_check_ran = true;
  h.resources = {"r0"};
  return h;
}

// A lock on `resource` acquired from `start_ms` to `ret_ms` after t0 = 1s,
// valid for 900ms (a 1s TTL less drift), used until `work_end_ms` and
// released "ok" 10ms later.
Section Held(int client, const std::string& resource, int64_t fence,
             int64_t start_ms, int64_t ret_ms, int64_t work_end_ms) {
  Section x = Won(client, resource, fence, (1000 + start_ms) * kMs,
                  (1000 + ret_ms) * kMs);
  x.valid_until = x.ret + 900 * kMs;
  x.work_start = x.ret;
  x.work_end = (1000 + work_end_ms) * kMs;
  x.release = "ok";
  x.release_at = x.work_end + 10 * kMs;
  return x;
}

Call Completed(int client, int64_t id, const std::string& kind,
               int64_t start_ms, int completions) {
  Call c;
  c.client = client;
  c.id = id;
  c.kind = kind;
  c.resource = "r0";
  c.start = (1000 + start_ms) * kMs;
  c.completions = completions;
  return c;
}

TEST(CheckHistoryInMemoryTest, HoldersTakingTurnsThroughAFaultPass) {
  History h = QuietRun();
  h.summary.heal = h.summary.t0 + 2000 * kMs;
  h.faults.push_back(
      {"kill", "1", h.summary.t0 + 700 * kMs, h.summary.t0 + 2000 * kMs});
  h.sections.push_back(Held(0, "r0", 1, 100, 110, 300));
  h.sections.back().fenced.push_back(
      {1, h.summary.t0 + 200 * kMs, h.summary.t0 + 210 * kMs, "accepted"});
  h.sections.push_back(Held(1, "r0", 2, 320, 330, 600));
  h.failed_acquisitions.push_back({0, "r0", h.summary.t0 + 800 * kMs,
                                   h.summary.t0 + 900 * kMs, "UNAVAILABLE"});
  // After the heal: each won 50ms after it was called on a free lock.
  h.sections.push_back(Held(0, "r0", 3, 2050, 2100, 2400));
  h.sections.back().fenced.push_back(
      {3, h.summary.t0 + 2200 * kMs, h.summary.t0 + 2210 * kMs, "accepted"});
  h.sections.push_back(Held(1, "r0", 4, 2500, 2550, 2800));
  h.calls.push_back(Completed(0, 1, "acquire", 2050, 1));
  h.calls.push_back(Completed(0, 2, "release", 2400, 1));

  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), IsEmpty());
  EXPECT_EQ(s.violations(), 0);
  EXPECT_THAT(s.details, IsEmpty());
  EXPECT_THAT(s.marks, IsEmpty());
  EXPECT_EQ(s.acquisitions, 4);
  EXPECT_EQ(s.acquire_failures, 1);
  EXPECT_THAT(s.acquire_failures_by_code, ElementsAre(Pair("UNAVAILABLE", 1)));
  EXPECT_THAT(s.faults_by_kind, ElementsAre(Pair("kill", 1)));
  EXPECT_EQ(s.fenced_writes, 2);
  EXPECT_EQ(s.fenced_accepted, 2);
  EXPECT_EQ(s.calls_checked, 2);
  EXPECT_EQ(s.max_gap_after_heal_ns, 50 * kMs);
}

TEST(CheckHistoryInMemoryTest, SecondHolderBeforeTheFirstStoppedIsCounted) {
  History h = QuietRun();
  // Client 0 works until 500ms; client 1 holds the lock from 400ms on.
  h.sections.push_back(Held(0, "r0", 1, 100, 110, 500));
  h.sections.push_back(Held(1, "r0", 2, 300, 400, 600));

  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("mutual_exclusion", 1)));
  EXPECT_EQ(s.violations(), 1);
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].kind, "mutual exclusion");
  EXPECT_EQ(s.marks[0].resource, "r0");
  EXPECT_EQ(s.marks[0].start, s.t0 + 400 * kMs);
  EXPECT_EQ(s.marks[0].end, s.t0 + 500 * kMs);
  ASSERT_EQ(s.details.size(), 1u);
  EXPECT_THAT(s.details[0], HasSubstr("held by client 0"));
  EXPECT_THAT(s.details[0], HasSubstr("overlap 100.0ms"));
}

// Held(), as a reader.
Section Read(int client, const std::string& resource, int64_t start_ms,
             int64_t ret_ms, int64_t work_end_ms) {
  Section x = Held(client, resource, 0, start_ms, ret_ms, work_end_ms);
  x.shared = true;
  return x;
}

// Held(), as `permits` permits of a semaphore of `limit`.
Section Permits(int client, const std::string& resource, int limit, int permits,
                int64_t start_ms, int64_t ret_ms, int64_t work_end_ms) {
  Section x = Held(client, resource, 0, start_ms, ret_ms, work_end_ms);
  x.limit = limit;
  x.permits = permits;
  return x;
}

TEST(CheckHistoryInMemoryTest, ReadersOverlappingEachOtherAreNoViolation) {
  History h = QuietRun();
  h.sections.push_back(Read(0, "r0", 100, 110, 500));
  h.sections.push_back(Read(1, "r0", 200, 210, 600));
  h.sections.push_back(Read(2, "r0", 300, 310, 400));
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
  EXPECT_EQ(h.summary.violations(), 0);
}

TEST(CheckHistoryInMemoryTest, AReaderInsideAWritersSectionIsCounted) {
  History h = QuietRun();
  h.sections.push_back(Held(0, "r0", 0, 100, 110, 500));
  h.sections.push_back(Read(1, "r0", 300, 400, 600));
  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("reader_with_writer", 1)));
  EXPECT_EQ(s.violations(), 1);
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].kind, "reader with writer");
  EXPECT_EQ(s.marks[0].start, s.t0 + 400 * kMs);
  EXPECT_EQ(s.marks[0].end, s.t0 + 500 * kMs);
  ASSERT_EQ(s.details.size(), 1u);
  EXPECT_THAT(s.details[0], HasSubstr("read by client 1"));
  EXPECT_THAT(s.details[0], HasSubstr("written by client 0"));
}

TEST(CheckHistoryInMemoryTest, AWriterInsideReadersSectionsIsCountedOnce) {
  History h = QuietRun();
  h.sections.push_back(Read(0, "r0", 100, 110, 500));
  h.sections.push_back(Read(1, "r0", 120, 130, 450));
  h.sections.push_back(Held(2, "r0", 0, 300, 400, 600));
  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("reader_with_writer", 1)));
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].end, s.t0 + 500 * kMs);  // The reader held longest.
}

TEST(CheckHistoryInMemoryTest, AWriterAfterTheReadersStoppedIsNoViolation) {
  History h = QuietRun();
  h.sections.push_back(Read(0, "r0", 100, 110, 300));
  h.sections.push_back(Read(1, "r0", 120, 130, 350));
  h.sections.push_back(Held(2, "r0", 0, 300, 360, 600));
  h.sections.push_back(Read(0, "r0", 500, 610, 700));
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
}

TEST(CheckHistoryInMemoryTest, PermitsUpToTheLimitAreNoViolationOneMoreIs) {
  History h = QuietRun();
  h.sections.push_back(Permits(0, "pool", 2, 1, 100, 110, 500));
  h.sections.push_back(Permits(1, "pool", 2, 1, 200, 210, 600));
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());

  h.sections.push_back(Permits(2, "pool", 2, 1, 300, 310, 400));
  h.summary = QuietRun().summary;
  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("permits_over_limit", 1)));
  ASSERT_EQ(s.details.size(), 1u);
  EXPECT_THAT(s.details[0], HasSubstr("3 permits held of 2"));
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].start, s.t0 + 310 * kMs);
  EXPECT_EQ(s.marks[0].end, s.t0 + 400 * kMs);
}

TEST(CheckHistoryInMemoryTest, PermitsAreCountedNotHolders) {
  History h = QuietRun();
  h.sections.push_back(Permits(0, "pool", 3, 2, 100, 110, 500));
  h.sections.push_back(Permits(1, "pool", 3, 2, 200, 210, 600));
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary),
              ElementsAre(Pair("permits_over_limit", 1)));
}

TEST(CheckHistoryInMemoryTest, ASemaphoreIsJudgedApartFromTheLockOfItsName) {
  History h = QuietRun();
  h.sections.push_back(Held(0, "pool", 0, 100, 110, 500));
  h.sections.push_back(Permits(1, "pool", 1, 1, 200, 210, 600));
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
}

TEST(CheckHistoryInMemoryTest, NextHolderAfterTheFirstStoppedIsNotAnOverlap) {
  // Within the first lock's validity, but after its holder stopped working:
  // a lock released early may be won again at once.
  History h = QuietRun();
  h.sections.push_back(Held(0, "r0", 1, 100, 110, 300));
  h.sections.push_back(Held(1, "r0", 2, 250, 320, 600));

  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
}

TEST(CheckHistoryInMemoryTest, HolderWithoutWorkEndHoldsUntilValidUntil) {
  // Without work_end the first holder counts as holding until valid_until
  // (1010ms): the second, at 320ms, overlaps it.
  History h = QuietRun();
  h.sections.push_back(Held(0, "r0", 1, 100, 110, 300));
  h.sections.back().work_end = 0;
  h.sections.push_back(Held(1, "r0", 2, 250, 320, 600));

  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary),
              ElementsAre(Pair("mutual_exclusion", 1)));
}

TEST(CheckHistoryInMemoryTest, CallbackRunTwiceAndOneNeverRunCountOneEach) {
  History h = QuietRun();
  h.calls.push_back(Completed(0, 1, "acquire", 100, 1));
  h.calls.push_back(Completed(0, 2, "release", 200, 2));
  h.calls.push_back(Completed(1, 1, "extend", 300, 0));

  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("callbacks", 2)));
  EXPECT_EQ(s.violations(), 2);
  EXPECT_EQ(s.calls_checked, 3);
  ASSERT_EQ(s.details.size(), 2u);
  EXPECT_THAT(s.details[0], HasSubstr("client 0 call 2 (release on r0"));
  EXPECT_THAT(s.details[0], HasSubstr("ran 2 times"));
  EXPECT_THAT(s.details[1], HasSubstr("client 1 call 1 (extend on r0"));
  EXPECT_THAT(s.details[1], HasSubstr("ran 0 times"));
  ASSERT_EQ(s.marks.size(), 2u);
  // Ran twice: a mark at the call. Never ran: owed until the end of the run.
  EXPECT_EQ(s.marks[0].kind, "callback");
  EXPECT_EQ(s.marks[0].start, s.t0 + 200 * kMs);
  EXPECT_EQ(s.marks[0].end, s.t0 + 200 * kMs);
  EXPECT_EQ(s.marks[1].kind, "callback");
  EXPECT_EQ(s.marks[1].start, s.t0 + 300 * kMs);
  EXPECT_EQ(s.marks[1].end, s.end);
  EXPECT_THAT(FormatSummary(s), HasSubstr("callbacks not run exactly once"));
  EXPECT_THAT(FormatSummary(s), HasSubstr(" 2 (of 3 calls)\n"));

  std::string dir = testing::TempDir() + "/torture_callbacks_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  ASSERT_TRUE(WriteJson(h, dir + "/history.json").ok());
  const auto json = nlohmann::json::parse(std::ifstream(dir + "/history.json"));
  EXPECT_EQ(json["summary"]["violations"]["callbacks"], 2);
}

TEST(CheckHistoryInMemoryTest, NoCallsRecordedIsNoCallbackViolation) {
  History h = QuietRun();
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
  EXPECT_EQ(h.summary.calls_checked, 0);
  EXPECT_THAT(FormatSummary(h.summary),
              HasSubstr("0 (no asynchronous calls recorded)"));
}

TEST(CheckHistoryInMemoryTest, EachLeftoverKeyIsOneViolation) {
  History h = QuietRun();
  h.leftover_keys.push_back({"0", "redlock:r0", "tok-a"});
  h.leftover_keys.push_back({"2", "redlock:r0", "tok-a"});

  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("leftovers", 2)));
  EXPECT_THAT(s.details,
              ElementsAre("leftover: key redlock:r0 on master 0 = tok-a",
                          "leftover: key redlock:r0 on master 2 = tok-a"));
  EXPECT_THAT(s.marks, IsEmpty());
}

TEST(CheckHistoryInMemoryTest, LeftoverCheckThatDidNotRunIsOneViolation) {
  History h = QuietRun();
  h.summary.leftover_check_ran = false;

  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), ElementsAre(Pair("leftovers", 1)));
  EXPECT_THAT(h.summary.details,
              ElementsAre("leftovers: the leftover-key check did not run"));
}

TEST(CheckHistoryInMemoryTest, ResourceNeverWonAfterTheHealBreaksLiveness) {
  // r1 is listed but no section won it: after the heal at 2s, 8s pass
  // without it, far over the 1.4s bound (TTL + retry + 300ms). r0 is won.
  History h = QuietRun();
  h.summary.heal = h.summary.t0 + 2000 * kMs;
  h.resources = {"r1", "r0"};
  h.sections.push_back(Held(0, "r0", 1, 2000, 2010, 2100));

  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("liveness", 1)));
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].resource, "r1");
  EXPECT_EQ(s.marks[0].start, s.heal);
  EXPECT_EQ(s.marks[0].end, s.end);
  EXPECT_THAT(s.details,
              ElementsAre("liveness: r1 never acquired after the heal"));
  EXPECT_THAT(h.resources, ElementsAre("r0", "r1"));
}

// A semaphore's liveness is judged on its own sections: permits won soon
// after the heal are live (and a semaphore with only permit sections is not
// "never acquired"); permits won late, after every earlier holder was gone,
// are counted.
TEST(CheckHistoryInMemoryTest, ASemaphoreIsJudgedLiveOnItsOwnSections) {
  History h = QuietRun();
  h.summary.heal = h.summary.t0 + 2000 * kMs;
  h.resources = {"pool"};
  h.sections.push_back(Permits(0, "pool", 2, 1, 1000, 1100, 1200));
  h.sections.push_back(Permits(1, "pool", 2, 2, 2050, 2100, 2200));
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
  EXPECT_EQ(h.summary.max_gap_after_heal_ns, 50 * kMs);

  // The second acquisition returns 1.5s after the lock was free (2.1s,
  // when the first key expired: never released), over the 1.4s bound.
  h.sections[0].release = "error";
  h.sections[1] = Permits(1, "pool", 2, 2, 2050, 3600, 3700);
  h.summary = QuietRun().summary;
  h.summary.heal = h.summary.t0 + 2000 * kMs;
  CheckHistory(&h);
  EXPECT_THAT(NonZeroViolations(h.summary), ElementsAre(Pair("liveness", 1)));
  ASSERT_EQ(h.summary.marks.size(), 1u);
  EXPECT_EQ(h.summary.marks[0].resource, "pool");
  EXPECT_EQ(h.summary.marks[0].start, h.summary.t0 + 2100 * kMs);
}

TEST(CheckHistoryInMemoryTest, SlowAcquisitionAfterTheLockWasFreeIsCounted) {
  // Healed at 2s; the last section's key expired at 1.1s + 1s TTL = 2.1s
  // (never released); the next acquisition, started at 2.05s, returns at
  // 3.6s: 1.5s after the lock was free, over the 1.4s bound.
  History h = QuietRun();
  h.summary.heal = h.summary.t0 + 2000 * kMs;
  h.sections.push_back(Held(0, "r0", 1, 1000, 1100, 1200));
  h.sections.back().release = "error";
  h.sections.push_back(Held(1, "r0", 2, 2050, 3600, 3700));

  CheckHistory(&h);
  const Summary& s = h.summary;
  EXPECT_THAT(NonZeroViolations(s), ElementsAre(Pair("liveness", 1)));
  EXPECT_EQ(s.max_gap_after_heal_ns, 1500 * kMs);
  ASSERT_EQ(s.marks.size(), 1u);
  EXPECT_EQ(s.marks[0].start, s.t0 + 2100 * kMs);
  EXPECT_EQ(s.marks[0].end, s.t0 + 3600 * kMs);
}

TEST(CheckHistoryInMemoryTest, LockReleasedOkIsFreeFromItsRelease) {
  // Healed at 2s. The first lock, won at 1.9s, is released at 2.21s; its key
  // would expire at 2.9s. The next acquisition, called at 2.1s, returns at
  // 3.7s: 1.49s after the release, over the 1.4s bound, but only 0.8s after
  // the expiry, which is what counts if the release did not succeed.
  for (const std::string release : {"ok", "error"}) {
    SCOPED_TRACE(release);
    History h = QuietRun();
    h.summary.heal = h.summary.t0 + 2000 * kMs;
    h.sections.push_back(Held(0, "r0", 1, 1800, 1900, 2200));
    h.sections.back().release = release;
    h.sections.push_back(Held(1, "r0", 2, 2100, 3700, 3800));

    CheckHistory(&h);
    if (release == "ok") {
      EXPECT_THAT(NonZeroViolations(h.summary),
                  ElementsAre(Pair("liveness", 1)));
      EXPECT_EQ(h.summary.max_gap_after_heal_ns, 1490 * kMs);
    } else {
      EXPECT_THAT(NonZeroViolations(h.summary), IsEmpty());
      EXPECT_EQ(h.summary.max_gap_after_heal_ns, 800 * kMs);
    }
  }
}

// The same history through the files and built in memory: one checker, one
// verdict, down to the detail lines and the marks.
TEST(CheckHistoryInMemoryTest, FilesAndTheSameHistoryInMemoryAgree) {
  std::string dir = testing::TempDir() + "/torture_same_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  {
    std::ofstream(dir + "/nemesis.log")
        << "RUN t0=1000 end=9000 heal=0 ttl_ms=1 retry_max_ms=1 "
           "resources=r0,r1\n"
        << "FAULT kind=partition targets=0 start=1500 end=2500\n"
        << "HEAL t=3000\n"
        << "LEFTOVER master=1 key=redlock:r1 value=tok-x\n"
        << "LEFTCHECK masters=3 t=8900\n";
    std::ofstream(dir + "/client-0.log")
        << "ACQ c=0 s=0 res=r0 token=a fence=5 start=1100 ret=1200 vu=2000 "
           "votes=ggg\n"
        << "WS c=0 s=0 t=1200\n"
        << "FW c=0 s=0 res=r0 fence=5 send=1300 ans=1400 result=accepted\n"
        << "UW c=0 s=0 res=r0 send=1450 ans=1460 result=ok value=1\n"
        << "FW c=0 s=0 res=r0 fence=5 send=1900 ans=1950 result=accepted\n"
        << "WE c=0 s=0 t=1960\n"
        << "REL c=0 s=0 t=1970 result=ok released=3\n"
        << "ACQFAIL c=0 res=r1 start=2000 ret=2100 code=UNAVAILABLE\n";
    std::ofstream(dir + "/client-1.log")
        << "ACQ c=1 s=0 res=r0 token=b fence=6 start=1500 ret=1600 vu=2400 "
           "votes=ggd\n"
        << "WS c=1 s=0 t=1600\n"
        << "FW c=1 s=0 res=r0 fence=6 send=1700 ans=1800 result=accepted\n"
        << "UW c=1 s=0 res=r0 send=2500 ans=2510 result=ok value=2\n"
        << "WE c=1 s=0 t=2600\n"
        << "REL c=1 s=0 t=2610 result=error released=-1\n"
        << "ACQ c=1 s=1 res=r1 token=c fence=1 start=3100 ret=3200 vu=4000 "
           "votes=ggg\n";
  }
  absl::StatusOr<History> from_files = CheckHistory(dir);
  ASSERT_TRUE(from_files.ok()) << from_files.status();

  History h;
  h.summary.t0 = 1000;
  h.summary.end = 9000;
  h.summary.heal = 3000;
  h.summary.ttl_ns = 1 * kMs;
  h.summary.retry_max_ns = 1 * kMs;
  h.summary.leftover_check_ran = true;
  h.resources = {"r0", "r1"};
  h.faults.push_back({"partition", "0", 1500, 2500});
  h.leftover_keys.push_back({"1", "redlock:r1", "tok-x"});
  h.failed_acquisitions.push_back({0, "r1", 2000, 2100, "UNAVAILABLE"});
  Section a = Won(0, "r0", 5, 1100, 1200);
  a.seq = 0;
  a.token = "a";
  a.votes = "ggg";
  a.valid_until = 2000;
  a.work_start = 1200;
  a.work_end = 1960;
  a.fenced = {{5, 1300, 1400, "accepted"}, {5, 1900, 1950, "accepted"}};
  a.unfenced = 1;
  a.release = "ok";
  a.release_at = 1970;
  Section b = Won(1, "r0", 6, 1500, 1600);
  b.seq = 0;
  b.token = "b";
  b.votes = "ggd";
  b.valid_until = 2400;
  b.work_start = 1600;
  b.work_end = 2600;
  b.fenced = {{6, 1700, 1800, "accepted"}};
  b.unfenced = 1;
  b.unfenced_late = 1;
  b.release = "error";
  b.release_at = 2610;
  Section c = Won(1, "r1", 1, 3100, 3200);
  c.seq = 1;
  c.token = "c";
  c.votes = "ggg";
  c.valid_until = 4000;
  h.sections = {c, b, a};  // In memory, in any order.
  CheckHistory(&h);

  const Summary& f = from_files->summary;
  const Summary& m = h.summary;
  // Overlap of a and b; a's second write (5) accepted after 6 was.
  EXPECT_THAT(NonZeroViolations(f),
              ElementsAre(Pair("leftovers", 1), Pair("mutual_exclusion", 1),
                          Pair("stale_fenced_accepted", 1)));
  EXPECT_EQ(NonZeroViolations(m), NonZeroViolations(f));
  EXPECT_EQ(FormatSummary(m), FormatSummary(f));
  EXPECT_EQ(m.details, f.details);
  ASSERT_EQ(m.marks.size(), f.marks.size());
  for (size_t i = 0; i < m.marks.size(); ++i) {
    EXPECT_EQ(m.marks[i].kind, f.marks[i].kind);
    EXPECT_EQ(m.marks[i].resource, f.marks[i].resource);
    EXPECT_EQ(m.marks[i].start, f.marks[i].start);
    EXPECT_EQ(m.marks[i].end, f.marks[i].end);
  }
  EXPECT_EQ(m.late_holders, f.late_holders);
  EXPECT_EQ(m.late_unfenced_writes, 1);
  EXPECT_EQ(f.late_unfenced_writes, 1);
  EXPECT_EQ(m.max_gap_after_heal_ns, f.max_gap_after_heal_ns);
  EXPECT_EQ(h.resources, from_files->resources);
}

// ---------------------------------------------------------------- elections

Proclamation Proclaimed(int client, int64_t epoch, int64_t revision,
                        const std::string& value, int64_t start) {
  return {client, "e0", epoch, revision, value, start};
}

LeaderView Told(int client, int64_t watch, int64_t epoch, int64_t revision,
                const std::string& value, int64_t at) {
  return {client, watch, "e0", epoch, revision, value, at};
}

// Two leaders: epoch 3 proclaims twice, epoch 5 once.
std::vector<Proclamation> TwoLeaders() {
  return {Proclaimed(0, 3, 1, "a1", 100), Proclaimed(0, 3, 2, "a2", 200),
          Proclaimed(1, 5, 1, "b1", 400)};
}

TEST(CheckLeaderViewsTest, ViewsOfProclaimedValuesInOrderAreClean) {
  Summary s;
  // Views may skip revisions and leaders; two observations of one client
  // are judged apart, so each may start low.
  CheckLeaderViews(TwoLeaders(),
                   {Told(2, 0, 3, 1, "a1", 150), Told(2, 0, 5, 1, "b1", 450),
                    Told(2, 1, 3, 2, "a2", 250), Told(2, 1, 5, 1, "b1", 460),
                    Told(3, 0, 3, 1, "a1", 100)},
                   &s);
  EXPECT_EQ(s.view_order, 0);
  EXPECT_EQ(s.view_unknown, 0);
  EXPECT_EQ(s.violations(), 0);
  EXPECT_EQ(s.proclamations, 3);
  EXPECT_EQ(s.leader_views, 5);
}

TEST(CheckLeaderViewsTest, AViewGoingBackOrToldTwiceIsCounted) {
  Summary s;
  // In order of `at`, not of the list: 3/2 then 3/1 (back), 5/1, 3/2
  // (back to an older epoch), 3/2 again (not above the one before).
  CheckLeaderViews(TwoLeaders(),
                   {Told(2, 0, 3, 1, "a1", 300), Told(2, 0, 3, 2, "a2", 250),
                    Told(2, 0, 5, 1, "b1", 500), Told(2, 0, 3, 2, "a2", 600),
                    Told(2, 0, 3, 2, "a2", 700)},
                   &s);
  EXPECT_EQ(s.view_order, 3);
  EXPECT_EQ(s.view_unknown, 0);
  EXPECT_EQ(s.violations(), 3);
  ASSERT_EQ(s.marks.size(), 3u);
  EXPECT_EQ(s.marks[0].kind, "view order");
  EXPECT_THAT(s.details[0], HasSubstr("epoch 3 revision 1"));
}

TEST(CheckLeaderViewsTest, AViewNoLeaderProclaimedIsCounted) {
  Summary s;
  CheckLeaderViews(TwoLeaders(),
                   {// Another value than the leader's at that revision.
                    Told(2, 0, 3, 1, "b1", 150),
                    // An epoch no campaign won.
                    Told(3, 0, 4, 1, "a1", 300),
                    // Told before the leader proclaimed it.
                    Told(4, 0, 5, 1, "b1", 399),
                    // Another election's.
                    {5, 0, "e1", 3, 1, "a1", 150}},
                   &s);
  EXPECT_EQ(s.view_unknown, 4);
  EXPECT_EQ(s.view_order, 0);
  EXPECT_EQ(s.violations(), 4);
  EXPECT_THAT(s.details[2], HasSubstr("proclaimed yet"));
}

TEST(CheckHistoryTest, ElectionLinesAreReadAndJudged) {
  std::string dir = testing::TempDir() + "/torture_election_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  {
    std::ofstream(dir + "/nemesis.log")
        << "RUN t0=0 end=1000 heal=0 ttl_ms=1 retry_max_ms=1 resources=e0\n"
        << "LEFTCHECK masters=3 t=900\n";
    std::ofstream(dir + "/client-0.log")
        << "ACQ c=0 s=0 res=e0 token=a fence=3 start=50 ret=100 vu=300 "
           "votes=ggg\n"
        << "PROCLAIM c=0 res=e0 epoch=3 rev=1 value=c0-0-1 start=100\n"
        << "PROCLAIM c=0 res=e0 epoch=3 rev=2 value=c0-0-2 start=200\n"
        << "WE c=0 s=0 t=290\n"
        << "VU c=0 s=0 vu=500\n";
    std::ofstream(dir + "/client-1.log")
        << "VIEW c=1 w=0 res=e0 epoch=3 rev=2 value=c0-0-2 t=250\n"
        << "VIEW c=1 w=0 res=e0 epoch=3 rev=1 value=c0-0-1 t=260\n"
        << "VIEW c=1 w=1 res=e0 epoch=3 rev=3 value=c0-0-3 t=270\n";
  }
  absl::StatusOr<History> h = CheckHistory(dir);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->sections.size(), 1u);
  EXPECT_EQ(h->sections[0].valid_until, 500);  // Moved on by VU.
  ASSERT_EQ(h->proclamations.size(), 2u);
  EXPECT_EQ(h->proclamations[1].value, "c0-0-2");
  ASSERT_EQ(h->views.size(), 3u);
  EXPECT_EQ(h->views[2].watch, 1);
  EXPECT_THAT(NonZeroViolations(h->summary),
              ElementsAre(Pair("view_order", 1), Pair("view_unknown", 1)));
  EXPECT_EQ(h->summary.violations(), 2);
  EXPECT_THAT(FormatSummary(h->summary),
              HasSubstr("observers told a view out of order"));
}

// history.json: the keys in their order, integers as integers, times in
// seconds to the microsecond, every string escaped, and one fault and one
// critical section per line.
TEST(WriteJsonTest, KeepsTheSchemaAndOneRecordPerLine) {
  History h;
  Summary& s = h.summary;
  s.t0 = 1'000'000'000;
  s.end = s.t0 + 30'000'000'000;
  s.heal = s.t0 + 25'000'000'000;
  s.acquisitions = 2;
  s.mutual_exclusion = 1;
  s.faults_by_kind = {{"kill", 1}};
  s.details = {"a \"quoted\" back\\slash\nand a tab\t"};
  h.faults.push_back(
      {"kill", "1,2", s.t0 + 4'000'102'000, s.t0 + 5'133'318'400});
  Section x = Won(3, "r0", 7, s.t0 + 1'000'000, s.t0 + 2'500'000);
  x.seq = 4;
  x.token = "ab\"cd";
  x.votes = "ggd";
  x.release = "released";
  x.fenced.push_back({7, s.t0 + 3'000'000, s.t0 + 3'250'000, "accepted"});
  h.sections.push_back(x);
  h.sections.push_back(Won(1, "r1", 8, s.t0 + 10'000'000, s.t0 + 20'000'000));

  std::string dir = testing::TempDir() + "/torture_json_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  ASSERT_TRUE(WriteJson(h, dir + "/history.json").ok());
  std::stringstream text;
  text << std::ifstream(dir + "/history.json").rdbuf();

  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 10u) << text.str();
  EXPECT_EQ(lines[0], "{");
  EXPECT_THAT(lines[1], testing::StartsWith("  \"summary\": {"));
  EXPECT_EQ(lines[2], "  \"faults\": [");
  EXPECT_EQ(lines[3],
            "    {\"kind\":\"kill\",\"targets\":\"1,2\",\"start_s\":4.000102,"
            "\"end_s\":5.133318}");
  EXPECT_EQ(lines[4], "  ],");
  EXPECT_EQ(lines[5], "  \"sections\": [");
  EXPECT_THAT(lines[6], testing::StartsWith("    {\"client\":3,"));
  EXPECT_EQ(lines[6].back(), ',');
  EXPECT_THAT(lines[7], testing::StartsWith("    {\"client\":1,"));
  EXPECT_EQ(lines[7].back(), '}');
  EXPECT_EQ(lines[8], "  ]");
  EXPECT_EQ(lines[9], "}");

  const auto json = nlohmann::ordered_json::parse(text.str());
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("summary", "faults", "sections"));

  const auto& summary = json["summary"];
  keys.clear();
  for (const auto& [key, value] : summary.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("duration_s", "heal_s", "acquisitions",
                                "acquire_failures", "fenced_writes",
                                "fenced_accepted", "fenced_rejected",
                                "unfenced_writes", "violations", "late_holders",
                                "late_fenced_writes", "late_fenced_rejected",
                                "late_unfenced_writes", "faults", "details"));
  EXPECT_EQ(summary["duration_s"], 30.0);
  EXPECT_TRUE(summary["acquisitions"].is_number_integer());
  EXPECT_EQ(summary["acquisitions"], 2);
  EXPECT_EQ(summary["violations"]["mutual_exclusion"], 1);
  EXPECT_EQ(summary["faults"]["kill"], 1);
  EXPECT_EQ(summary["details"][0], s.details[0]);

  const auto& section = json["sections"][0];
  keys.clear();
  for (const auto& [key, value] : section.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("client", "seq", "resource", "token", "fence",
                                "votes", "acquire_start_s", "acquire_return_s",
                                "valid_until_s", "work_start_s", "work_end_s",
                                "release", "fenced_writes"));
  EXPECT_EQ(section["client"], 3);
  EXPECT_EQ(section["seq"], 4);
  EXPECT_EQ(section["token"], "ab\"cd");
  EXPECT_TRUE(section["fence"].is_number_integer());
  EXPECT_EQ(section["acquire_return_s"], 0.0025);
  EXPECT_EQ(section["fenced_writes"][0]["answer_s"], 0.00325);
  EXPECT_EQ(section["fenced_writes"][0]["result"], "accepted");
  EXPECT_TRUE(json["sections"][1]["fenced_writes"].empty());
}

}  // namespace
}  // namespace redlock::torture
