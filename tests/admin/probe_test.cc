// Copyright 2026 The redlock Authors.
//
// The operator's API's reading of what masters hold (src/admin/probe.h):
// who holds a lock and for how long, whether a master's grants count, what
// its persistence and eviction policy risk, and its membership record as
// `redlock status` shows it. Pure: statuses are made here, no server; the
// probes themselves run against real servers in tests/tools/cli_test.cc.

#include "src/admin/probe.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/algorithm/membership.h"

namespace redlock::admin {
namespace {

MasterStatus Holding(std::string token, int64_t pttl_ms) {
  MasterStatus s;
  s.reachable = true;
  s.token = std::move(token);
  s.pttl_ms = pttl_ms;
  return s;
}

MasterStatus Free() {
  MasterStatus s;
  s.reachable = true;
  return s;
}

TEST(SummarizeTest, TheHolderLeavesAQuorumWhenItsQuorumThLongestTtlRunsOut) {
  const std::vector<MasterStatus> statuses = {
      Holding("a", 9000), Holding("a", 3000), Holding("a", 6000), Free(),
      Holding("b", 8000)};
  const HolderSummary summary = Summarize(statuses, /*quorum=*/3);
  EXPECT_EQ(summary.token, "a");
  EXPECT_EQ(summary.holders, 3);
  EXPECT_EQ(summary.reachable, 5);
  // 9 s, 6 s, 3 s left: three masters hold it for the shortest of the three.
  EXPECT_EQ(summary.expires_in, absl::Milliseconds(3000));
  // With quorum 2, the second longest.
  EXPECT_EQ(Summarize(statuses, 2).expires_in, absl::Milliseconds(6000));
}

TEST(SummarizeTest, FewerHoldersThanAQuorumIsNoHolderForAnyTime) {
  const HolderSummary summary =
      Summarize({Holding("a", 9000), Free(), Free()}, 2);
  EXPECT_EQ(summary.holders, 1);
  EXPECT_EQ(summary.expires_in, absl::ZeroDuration());
}

TEST(SummarizeTest, ASecondAddressOfOneServerIsNotCountedTwice) {
  MasterStatus again = Holding("a", 9000);
  again.same_server_as = 0;
  const HolderSummary summary =
      Summarize({Holding("a", 9000), again, Free()}, 2);
  EXPECT_EQ(summary.holders, 1);
  EXPECT_EQ(summary.reachable, 2);
  EXPECT_EQ(summary.expires_in, absl::ZeroDuration());
}

TEST(SummarizeTest, AKeyWithoutTtlHoldsForever) {
  const HolderSummary summary =
      Summarize({Holding("a", -1), Holding("a", -1), Free()}, 2);
  EXPECT_EQ(summary.expires_in, absl::InfiniteDuration());
}

MasterStatus Marked(std::string marker, std::string run_id, int64_t uptime_s) {
  MasterStatus s = Free();
  s.marker = std::move(marker);
  s.run_id = std::move(run_id);
  s.uptime_s = uptime_s;
  return s;
}

TEST(GrantsCountTest, ATrustedMarkerOfTheSameProcessCounts) {
  EXPECT_TRUE(GrantsCount(Marked("trusted:1700000000000000:abc", "abc", 5),
                          absl::Seconds(60)));
}

TEST(GrantsCountTest, ARestartedNonDurableMasterCountsOnlyAfterMaxTtl) {
  const absl::Duration max_ttl = absl::Seconds(60);
  // Marked by another process: restarted since, and not durable.
  EXPECT_FALSE(
      GrantsCount(Marked("trusted:1700000000000000:old", "new", 5), max_ttl));
  EXPECT_TRUE(
      GrantsCount(Marked("trusted:1700000000000000:old", "new", 60), max_ttl));
  // Durable (AOF, fsync always): its grants survived the restart.
  MasterStatus durable = Marked("trusted:1700000000000000:old", "new", 5);
  durable.persistence.known = true;
  durable.persistence.aof = true;
  durable.persistence.appendfsync = "always";
  EXPECT_TRUE(GrantsCount(durable, max_ttl));
  // Reborn (restarted empty): only after max_ttl, durable or not.
  EXPECT_FALSE(
      GrantsCount(Marked("reborn:1700000000000000:new", "new", 5), max_ttl));
  EXPECT_TRUE(
      GrantsCount(Marked("reborn:1700000000000000:new", "new", 61), max_ttl));
}

TEST(GrantsCountTest, WhatCannotBeJudgedDoesNotCount) {
  const absl::Duration max_ttl = absl::Seconds(60);
  // No marker: no client counts it until one marks it.
  MasterStatus unmarked = Free();
  unmarked.uptime_s = 100000;
  EXPECT_FALSE(GrantsCount(unmarked, max_ttl));
  // Unreachable, or a second address of a listed server.
  MasterStatus down = Marked("trusted:1700000000000000:abc", "abc", 5);
  down.reachable = false;
  EXPECT_FALSE(GrantsCount(down, max_ttl));
  MasterStatus twice = Marked("trusted:1700000000000000:abc", "abc", 5);
  twice.same_server_as = 0;
  EXPECT_FALSE(GrantsCount(twice, max_ttl));
  // A marker without a run_id, read without TIME: counted as a restart.
  EXPECT_FALSE(GrantsCount(Marked("trusted", "abc", 5), max_ttl));
  // A state the library never writes.
  EXPECT_FALSE(GrantsCount(Marked("bogus:1:abc", "abc", 100000), max_ttl));
}

TEST(MarkerStateTest, NamesTheStateOrNone) {
  EXPECT_EQ(MarkerState(Free()), "none");
  EXPECT_EQ(MarkerState(Marked("reborn:1700000000000000:x", "x", 1)), "reborn");
}

TEST(RiskNotesTest, NoevictionAndAofAlwaysAreQuietEverythingElseIsNamed) {
  MasterStatus safe = Free();
  safe.maxmemory_policy = "noeviction";
  safe.persistence.known = true;
  safe.persistence.aof = true;
  safe.persistence.appendfsync = "always";
  EXPECT_TRUE(RiskNotes(safe).empty());
  EXPECT_TRUE(Durable(safe));
  EXPECT_FALSE(EvictionRisk(safe));
  EXPECT_EQ(PersistenceText(safe), "aof always");

  MasterStatus risky = safe;
  risky.maxmemory_policy = "allkeys-lru";
  risky.persistence.appendfsync = "everysec";
  const std::vector<std::string> notes = RiskNotes(risky);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_TRUE(absl::StrContains(notes[0], "allkeys-lru")) << notes[0];
  EXPECT_TRUE(absl::StrContains(notes[1], "everysec")) << notes[1];
  EXPECT_TRUE(EvictionRisk(risky));
  EXPECT_FALSE(Durable(risky));

  // A policy not read is not called a risk here (the probe says why it
  // could not read it); unknown persistence is not durable.
  MasterStatus unread = Free();
  EXPECT_FALSE(EvictionRisk(unread));
  EXPECT_FALSE(Durable(unread));
  ASSERT_EQ(RiskNotes(unread).size(), 1u);
}

std::string MarkerWith(const std::string& member,
                       const internal::Membership& record) {
  return "trusted:1700000000000000:abc" +
         internal::MarkerSuffix(member, record) + ";since=1700000000000000";
}

TEST(MembershipTextTest, ShowsTheEpochTheMembersAndAJointChange) {
  internal::Membership record;
  record.deployment = "0123456789abcdef";
  record.epoch = 2;
  record.members = {"a:1", "b:1", "c:1"};
  MasterStatus s = Marked(MarkerWith("a:1", record), "abc", 5);
  s.member = "a:1";
  EXPECT_EQ(MembershipText(s), "epoch 2 steady a:1,b:1,c:1");
  const MarkerRecord parsed = RecordOf(s);
  EXPECT_TRUE(parsed.present);
  EXPECT_TRUE(parsed.error.ok()) << parsed.error;
  EXPECT_EQ(parsed.record.members, record.members);

  record.epoch = 3;
  record.next = {"a:1", "b:1", "d:1"};
  s.marker = MarkerWith("a:1", record);
  EXPECT_EQ(MembershipText(s), "epoch 3 joint a:1,b:1,c:1 -> a:1,b:1,d:1");
  // The record names this server as another member than configured.
  s.member = "127.0.0.1:1";
  EXPECT_TRUE(absl::StrContains(MembershipText(s), "(names this server a:1)"))
      << MembershipText(s);
}

TEST(MembershipTextTest, NoRecordIsADashAndABadOneSaysWhy) {
  EXPECT_EQ(MembershipText(Free()), "-");
  EXPECT_EQ(MembershipText(Marked("trusted:1:abc", "abc", 5)), "-");
  const MasterStatus bad = Marked("trusted:1:abc;member=a:1;epoch=x", "abc", 5);
  EXPECT_TRUE(absl::StartsWith(MembershipText(bad), "unreadable: "))
      << MembershipText(bad);
  EXPECT_FALSE(RecordOf(bad).error.ok());
}

}  // namespace
}  // namespace redlock::admin
