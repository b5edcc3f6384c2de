// Copyright 2026 The redlock Authors.
//
// The torture checker's fence-token checks (tools/torture/history.h) on
// made-up histories: a checker that cannot fail proves nothing. And the
// history.json it writes.

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <fstream>
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
