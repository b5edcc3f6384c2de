// Copyright 2026 The redlock Authors.
//
// The membership rule alone (src/algorithm/membership.h): which master's grants
// count under the deployment's membership record, and how the votes are counted
// while the deployment changes its masters. Pure functions, no servers.

#include "src/algorithm/membership.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "src/algorithm/scripts.h"
#include "src/engine/quorum_round.h"

namespace redlock::internal {
namespace {

bool Mentions(const absl::Status& status, absl::string_view text) {
  return absl::StrContains(status.message(), text);
}

Membership Steady(std::vector<std::string> members, int64_t epoch = 1) {
  Membership m;
  m.members = std::move(members);
  m.epoch = epoch;
  m.deployment = NewDeploymentId(m.members, Quorum::kMajority);
  return m;
}

Membership Joint(std::vector<std::string> from, std::vector<std::string> to,
                 int64_t epoch = 2) {
  Membership m = Steady(std::move(from), epoch);
  m.next = std::move(to);
  return m;
}

// A master carrying `record` under the name `member`, in the process it was
// written to.
MemberView Carrying(const Membership& record, std::string member) {
  MemberView v;
  v.known = true;
  v.marked = true;
  v.has_record = true;
  v.member = std::move(member);
  v.record = record;
  v.kept = true;
  v.holder_current = true;
  return v;
}

// The same, after a restart that may have lost writes (an RDB snapshot).
MemberView CarryingAfterARestart(const Membership& record, std::string member) {
  MemberView v = Carrying(record, std::move(member));
  v.kept = false;
  v.holder_current = false;
  return v;
}

MemberView NotHeard() { return MemberView(); }

MemberView Unmarked() {
  MemberView v;
  v.known = true;
  return v;
}

TEST(MembershipRecordTest, RecordTextRoundTripsThroughAMarker) {
  Membership joint = Joint({"a:1", "b:2", "c:3"}, {"a:1", "b:2", "d:4"}, 7);
  const std::string marker = "trusted:1700000000000000:abc:3600000" +
                             MarkerSuffix("b:2", joint) + ";since=42";
  std::string state, run_id;
  int64_t time_us = 0, max_ttl_ms = 0;
  std::optional<std::string> suffix;
  ParseMarker(marker, &state, &time_us, &run_id, &max_ttl_ms, &suffix);
  EXPECT_EQ(state, "trusted");
  EXPECT_EQ(run_id, "abc");
  EXPECT_EQ(max_ttl_ms, 3600000);
  ASSERT_TRUE(suffix.has_value());
  std::string member;
  Membership parsed;
  ASSERT_TRUE(ParseMarkerRecord(*suffix, &member, &parsed).ok());
  EXPECT_EQ(member, "b:2");
  EXPECT_EQ(RecordText(parsed), RecordText(joint));
  EXPECT_EQ(parsed.since_us, 42);
  EXPECT_TRUE(parsed.joint());
}

TEST(MembershipRecordTest, AMarkerFromBeforeRecordsHasNone) {
  std::string state;
  int64_t time_us = 0;
  std::optional<std::string> suffix = "stale";
  ParseMarker("trusted:5:run:1000", &state, &time_us, nullptr, nullptr,
              &suffix);
  EXPECT_FALSE(suffix.has_value());
}

TEST(MembershipRecordTest, MalformedRecordsAreRefusedNamingTheField) {
  std::string member;
  Membership m;
  EXPECT_TRUE(Mentions(ParseMarkerRecord("member=a;deployment=ab;epoch=0;"
                                         "members=a;next=;quorum=majority",
                                         &member, &m),
                       "epoch"));
  EXPECT_TRUE(Mentions(ParseMarkerRecord("member=a;deployment=ab;epoch=1;"
                                         "members=b,a;next=;quorum=majority",
                                         &member, &m),
                       "sorted"));
  EXPECT_TRUE(Mentions(ParseMarkerRecord("member=a;deployment=XYZ;epoch=1;"
                                         "members=a;next=;quorum=majority",
                                         &member, &m),
                       "hex"));
  EXPECT_TRUE(Mentions(
      ParseMarkerRecord(
          "member=a;deployment=ab;epoch=1;members=a;next=", &member, &m),
      "missing"));
  EXPECT_TRUE(Mentions(ParseMarkerRecord("member=a;deployment=ab;epoch=1;"
                                         "members=;next=;quorum=majority",
                                         &member, &m),
                       "empty"));
  EXPECT_FALSE(ParseMarkerRecord("\x01\xff", &member, &m).ok());
}

TEST(MembershipRecordTest, MemberNamesRefuseSeparators) {
  EXPECT_TRUE(CheckMemberName("127.0.0.1:7001").ok());
  EXPECT_TRUE(CheckMemberName("[::1]:7001").ok());
  for (const char* bad : {"", "a b", "a;b", "a,b", "a=b", "a|b", "a\tb"}) {
    EXPECT_FALSE(CheckMemberName(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckMemberName(std::string(256, 'a')).ok());
}

TEST(CheckListTest, SteadyNeedsExactlyTheMembers) {
  const Membership m = Steady({"a", "b", "c"});
  EXPECT_TRUE(CheckList(m, {"a", "b", "c"}).ok());
  const absl::Status other = CheckList(m, {"a", "b", "d"});
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Mentions(other, "a,b,d")) << other;
  EXPECT_TRUE(Mentions(other, "a,b,c")) << other;
  EXPECT_TRUE(Mentions(other, "redlock reconfigure")) << other;
  EXPECT_FALSE(CheckList(m, {"a", "b"}).ok());
  EXPECT_FALSE(CheckList(m, {"a", "b", "c", "d"}).ok());
}

TEST(CheckListTest, AChangeAdmitsTheOldListTheNewOneOrBoth) {
  const Membership m = Joint({"a", "b", "c"}, {"a", "b", "d"});
  EXPECT_TRUE(CheckList(m, {"a", "b", "c"}).ok());
  EXPECT_TRUE(CheckList(m, {"a", "b", "d"}).ok());
  EXPECT_TRUE(CheckList(m, {"a", "b", "c", "d"}).ok());
  EXPECT_FALSE(CheckList(m, {"a", "b", "e"}).ok());
  EXPECT_FALSE(CheckList(m, {"a", "b"}).ok());
}

TEST(JudgeMembershipTest, AMarkedMemberWithoutARecordCountsWhileItIsWritten) {
  const Membership m = Steady({"a", "b", "c"});
  MemberView hand_marked = Unmarked();
  hand_marked.marked = true;  // "trusted:0:<run_id>", an operator's.
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), Carrying(m, "b"), hand_marked},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  EXPECT_TRUE(j.standing[2].ok()) << j.standing[2];
  EXPECT_TRUE(j.needs_record[2]);
}

// While the first record is appended to markers from before records, one
// master carries it: the others, marked in the process that runs now, still
// count, and are given the record. They have never been given one, so they
// are no newer than it; a finished change leaves fewer than a quorum of
// its old members at the record before it, kept or not yet recorded.
TEST(JudgeMembershipTest,
     KeptMarkersWithoutARecordCountBeforeTheRecordIsKnown) {
  const Membership m = Steady({"a", "b", "c"});
  MemberView hand_marked = Unmarked();
  hand_marked.marked = true;
  hand_marked.kept = true;
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), hand_marked, hand_marked},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  for (const absl::Status& s : j.standing) EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(j.needs_record[1]);
  // The same markers after a restart (their run_id is another) do not.
  hand_marked.kept = false;
  const MembershipJudgement restarted =
      JudgeMembership({Carrying(m, "a"), hand_marked, hand_marked},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  EXPECT_TRUE(Mentions(restarted.standing[1], "not known to be current"))
      << restarted.standing[1];
}

TEST(JudgeMembershipTest, NoRecordAnywhereLeavesEveryMasterToTheOtherRules) {
  const MembershipJudgement j = JudgeMembership(
      {Unmarked(), Unmarked()}, {"a", "b"}, {"a", "b"}, Quorum::kMajority);
  EXPECT_FALSE(j.adopted.has_value());
  for (const absl::Status& s : j.standing) EXPECT_TRUE(s.ok()) << s;
}

TEST(JudgeMembershipTest, AClientOnAnotherListIsRefusedEverywhere) {
  const Membership m = Steady({"a", "b", "c"});
  // The race: Y's list {a, b, d}; a and b carry {a, b, c}.
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), Carrying(m, "b"), Unmarked()},
                      {"a", "b", "d"}, {"a", "b", "d"}, Quorum::kMajority);
  EXPECT_FALSE(j.adopted.has_value());
  for (const absl::Status& s : j.standing) {
    EXPECT_TRUE(Mentions(s, "a,b,c")) << s;
    EXPECT_TRUE(Mentions(s, "a,b,d")) << s;
  }
  EXPECT_FALSE(j.needs_record[2]);
}

TEST(JudgeMembershipTest, AMasterWithoutARecordWhileOthersHaveOneCastsNoGrant) {
  const Membership m = Steady({"a", "b", "c"});
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), Carrying(m, "b"), Unmarked()},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  ASSERT_TRUE(j.adopted.has_value());
  EXPECT_TRUE(j.standing[0].ok());
  EXPECT_TRUE(j.standing[1].ok());
  EXPECT_TRUE(Mentions(j.standing[2], "no membership record")) << j.standing[2];
  EXPECT_TRUE(j.needs_record[2]);
}

TEST(JudgeMembershipTest, AServerOfAnotherDeploymentRefusesEveryMaster) {
  const Membership ours = Steady({"a", "b", "c"});
  const Membership theirs = Steady({"d"});
  const MembershipJudgement j = JudgeMembership(
      {Carrying(ours, "a"), Carrying(ours, "b"), Carrying(theirs, "d")},
      {"a", "b", "d"}, {"a", "b", "d"}, Quorum::kMajority);
  EXPECT_FALSE(j.adopted.has_value());
  for (const absl::Status& s : j.standing) {
    EXPECT_TRUE(Mentions(s, "two deployments")) << s;
  }
}

TEST(JudgeMembershipTest, TwoConfigurationsAtOneEpochRefuseEveryMaster) {
  const Membership one = Joint({"a", "b", "c"}, {"a", "b", "d"});
  const Membership two = Joint({"a", "b", "c"}, {"a", "b", "e"});
  const MembershipJudgement j =
      JudgeMembership({Carrying(one, "a"), Carrying(two, "b"), Unmarked()},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  EXPECT_FALSE(j.adopted.has_value());
  EXPECT_TRUE(Mentions(j.standing[2], "two configurations")) << j.standing[2];
}

TEST(JudgeMembershipTest, TheHighestEpochIsAdopted) {
  const Membership old_record = Steady({"a", "b", "c"}, 1);
  const Membership joint = Joint({"a", "b", "c"}, {"a", "b", "d"}, 2);
  const MembershipJudgement j = JudgeMembership(
      {Carrying(joint, "a"), Carrying(joint, "b"), Carrying(old_record, "c")},
      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  ASSERT_TRUE(j.adopted.has_value());
  EXPECT_EQ(j.adopted->epoch, 2);
  EXPECT_TRUE(j.adopted->joint());
  for (const absl::Status& s : j.standing) EXPECT_TRUE(s.ok()) << s;
}

// The second scene: C was down through a change a,b,c -> a,b,d and
// kept epoch 1; a restarted empty; b is out of reach. Epoch 1 is the highest
// record heard, but one of its three members carries it: it is not taken
// for the deployment's, and nothing is written onto a.
TEST(JudgeMembershipTest, AnOldRecordLeftOnAMinorityIsNotTakenForCurrent) {
  const Membership old_record = Steady({"a", "b", "c"}, 1);
  const MembershipJudgement j = JudgeMembership(
      {Unmarked(), NotHeard(), Carrying(old_record, "c")}, {"a", "b", "c"},
      {"a", "c"}, Quorum::kMajority, /*unknown=*/1,
      /*guard_judges_unmarked=*/true);
  EXPECT_TRUE(Mentions(j.standing[0], "it carries no membership record"))
      << j.standing[0];
  EXPECT_TRUE(Mentions(j.standing[0], "carried by 1 of 3 of its members"))
      << j.standing[0];
  EXPECT_FALSE(j.needs_record[0]);
  // c's own grant counts: alone it is no quorum.
  EXPECT_TRUE(j.standing[2].ok()) << j.standing[2];
}

// The same with a back from an RDB snapshot taken before the change: its
// epoch-1 record is not kept, and is no evidence.
TEST(JudgeMembershipTest, ARecordBackFromASnapshotIsNoEvidence) {
  const Membership old_record = Steady({"a", "b", "c"}, 1);
  const MembershipJudgement j = JudgeMembership(
      {CarryingAfterARestart(old_record, "a"), NotHeard(),
       Carrying(old_record, "c")},
      {"a", "b", "c"}, {"a", "c"}, Quorum::kMajority, /*unknown=*/1,
      /*guard_judges_unmarked=*/true);
  EXPECT_TRUE(Mentions(j.standing[0], "may be older than it was given"))
      << j.standing[0];
  EXPECT_TRUE(Mentions(j.standing[0], "carried by 1 of 3")) << j.standing[0];
  EXPECT_TRUE(Mentions(j.standing[0], "a restarted since it was written"))
      << j.standing[0];
  EXPECT_FALSE(j.needs_record[0]);
  EXPECT_TRUE(j.standing[2].ok()) << j.standing[2];
}

// Once a quorum carries the record kept, a member that restarted since its
// record was written counts (as the restart guard judges it) and is given
// the record again, naming its new process.
TEST(JudgeMembershipTest,
     ARestartedMembersRecordIsWrittenAgainOnceKnownCurrent) {
  const Membership m = Steady({"a", "b", "c"});
  const MembershipJudgement j = JudgeMembership(
      {CarryingAfterARestart(m, "a"), Carrying(m, "b"), Carrying(m, "c")},
      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  ASSERT_TRUE(j.adopted.has_value());
  for (const absl::Status& s : j.standing) EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(j.needs_record[0]);
  EXPECT_FALSE(j.needs_record[1]);
}

// A durable master keeps its record through a restart: it is evidence at
// once, and still given a record that names its new process.
TEST(JudgeMembershipTest, ADurableRestartedMemberIsEvidenceAndIsRestamped) {
  const Membership m = Steady({"a", "b", "c"});
  MemberView durable = CarryingAfterARestart(m, "a");
  durable.kept = true;
  const MembershipJudgement j =
      JudgeMembership({durable, NotHeard(), Carrying(m, "c")}, {"a", "b", "c"},
                      {"a", "c"}, Quorum::kMajority, /*unknown=*/1);
  ASSERT_TRUE(j.adopted.has_value());
  EXPECT_TRUE(j.needs_record[0]);
}

// A joint record that reached too few old members (a begin that failed
// half-way) is acted on by the masters that carry a kept record (every
// joint quorum holds a quorum of the old members), but given to no master:
// the unmarked joining one casts no grant.
TEST(JudgeMembershipTest, AJointRecordOnTooFewOldMembersIsGivenToNoMaster) {
  const Membership old_record = Steady({"a", "b", "c"}, 1);
  const Membership joint = Joint({"a", "b", "c"}, {"a", "b", "d"}, 2);
  const MembershipJudgement j = JudgeMembership(
      {Carrying(old_record, "a"), Carrying(joint, "b"),
       Carrying(old_record, "c"), Unmarked()},
      {"a", "b", "c", "d"}, {"a", "b", "c", "d"}, Quorum::kMajority, 0,
      /*guard_judges_unmarked=*/true);
  ASSERT_TRUE(j.adopted.has_value());
  EXPECT_TRUE(j.adopted->joint());
  for (int i : {0, 1, 2}) EXPECT_TRUE(j.standing[i].ok()) << j.standing[i];
  EXPECT_TRUE(Mentions(j.standing[3], "carried by 1 of 3 of its members"))
      << j.standing[3];
  EXPECT_FALSE(j.needs_record[3]);
}

TEST(RecordKeptTest, ARecordIsKeptInTheProcessItNames) {
  Membership m = Steady({"a"});
  m.holder = "run-1";
  EXPECT_TRUE(RecordKept(m, "run-0", "run-1", /*durable=*/false));
  EXPECT_FALSE(RecordKept(m, "run-1", "run-2", /*durable=*/false));
  EXPECT_TRUE(RecordKept(m, "run-1", "run-2", /*durable=*/true));
  // Without a holder, the marker's process: records are written only to a
  // process that kept its marker.
  m.holder.clear();
  EXPECT_TRUE(RecordKept(m, "run-1", "run-1", /*durable=*/false));
  EXPECT_FALSE(RecordKept(m, "run-0", "run-1", /*durable=*/false));
  EXPECT_FALSE(RecordKept(m, "", "", /*durable=*/false));
}

TEST(MembershipRecordTest, TheHolderRoundTripsAndIsNoPartOfTheRecordText) {
  const Membership m = Steady({"a", "b"});
  const std::string suffix = MarkerSuffix("a", m, "0123abcd");
  // The reconfigure script reads the record from "deployment=" on.
  EXPECT_TRUE(absl::StrContains(suffix, ";holder=0123abcd;deployment="))
      << suffix;
  std::string member;
  Membership parsed;
  ASSERT_TRUE(
      ParseMarkerRecord(absl::string_view(suffix).substr(1), &member, &parsed)
          .ok());
  EXPECT_EQ(parsed.holder, "0123abcd");
  EXPECT_EQ(RecordText(parsed), RecordText(m));
}

TEST(JudgeMembershipTest, AServerNamedOtherwiseThanItsMarkerSaysCastsNoGrant) {
  const Membership m = Steady({"a", "b", "c"});
  // The client's list swapped b and c.
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), Carrying(m, "c"), Carrying(m, "b")},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  EXPECT_TRUE(j.standing[0].ok());
  EXPECT_TRUE(Mentions(j.standing[1], "member c")) << j.standing[1];
  EXPECT_TRUE(Mentions(j.standing[2], "member b")) << j.standing[2];
}

// Every member (unanimous) and a majority intersect: a client with the
// other rule is admitted and counts under its own.
TEST(JudgeMembershipTest, AClientOfTheOtherQuorumRuleCountsUnderItsOwn) {
  const Membership m = Steady({"a", "b", "c"});
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), Carrying(m, "b"), Carrying(m, "c")},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kUnanimous);
  ASSERT_TRUE(j.adopted.has_value());
  EXPECT_TRUE(j.standing[0].ok()) << j.standing[0];
  const std::vector<QuorumGroup> groups =
      QuorumGroups(m, {"a", "b", "c"}, Quorum::kUnanimous);
  EXPECT_EQ(groups[0].quorum, 3);
}

TEST(JudgeMembershipTest, AnUnreadableRecordRefusesEveryMaster) {
  const Membership m = Steady({"a", "b", "c"});
  MemberView broken = Unmarked();
  broken.marked = true;
  broken.record_error = absl::InvalidArgumentError("bad");
  const MembershipJudgement j =
      JudgeMembership({Carrying(m, "a"), Carrying(m, "b"), broken},
                      {"a", "b", "c"}, {"a", "b", "c"}, Quorum::kMajority);
  EXPECT_TRUE(Mentions(j.standing[0], "does not parse")) << j.standing[0];
}

TEST(JudgeMembershipTest, ANonMemberDuringAChangeIsNamedWithTheProcedure) {
  const Membership m = Joint({"a", "b", "c"}, {"a", "b", "d"});
  const MembershipJudgement j = JudgeMembership(
      {Carrying(m, "a"), Carrying(m, "b"), Unmarked(), Unmarked()},
      {"a", "b", "d", "e"}, {"a", "b", "d"}, Quorum::kMajority);
  ASSERT_TRUE(j.adopted.has_value());
  EXPECT_TRUE(j.needs_record[2]);
  EXPECT_TRUE(Mentions(j.standing[3], "not a member")) << j.standing[3];
  EXPECT_TRUE(Mentions(j.standing[3], "redlock reconfigure")) << j.standing[3];
  EXPECT_FALSE(j.needs_record[3]);
}

// Votes of masters a, b, c, d (indices 0-3) under a change from {a, b, c}
// to {a, b, d}.
TEST(QuorumGroupsTest, AChangeNeedsAQuorumOfTheOldMembersAndOfTheNew) {
  const Membership m = Joint({"a", "b", "c"}, {"a", "b", "d"});
  const std::vector<QuorumGroup> groups = QuorumGroups(m, {"a", "b", "c", "d"});
  ASSERT_EQ(groups.size(), 2u);
  // {a, c}: a majority of the old members only.
  EXPECT_FALSE(QuorumOfEvery(groups, {true, false, true, false}));
  // {b, d}: a majority of the new members only.
  EXPECT_FALSE(QuorumOfEvery(groups, {false, true, false, true}));
  EXPECT_TRUE(QuorumOfEvery(groups, {true, true, false, false}));
  EXPECT_TRUE(QuorumOfEvery(groups, {true, false, true, true}));
}

TEST(QuorumGroupsTest, MembersWithoutAnAddressHereCountAsFailedVotes) {
  // A client on the new list {a, b, d} during the change: it has no
  // address for c, so a and b must both grant for the old members.
  const Membership m = Joint({"a", "b", "c"}, {"a", "b", "d"});
  VoteTally tally(3, QuorumGroups(m, {"a", "b", "d"}));
  tally.Record(0, Vote::kGranted);
  tally.Record(2, Vote::kGranted);
  EXPECT_FALSE(tally.QuorumReached());
  tally.Record(1, absl::UnavailableError("down"));
  EXPECT_TRUE(tally.QuorumImpossible());
  EXPECT_EQ(tally.LossCode(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(tally.DescribeQuorum(), "old members"));
}

TEST(QuorumGroupsTest, ASteadyRecordIsOneGroupOfItsMembers) {
  const std::vector<QuorumGroup> groups =
      QuorumGroups(Steady({"a", "b", "c"}), {"a", "b", "c"});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].quorum, 2);
  VoteTally tally(3, groups);
  tally.Record(0, Vote::kGranted);
  EXPECT_FALSE(tally.QuorumReached());
  tally.Record(2, Vote::kGranted);
  EXPECT_TRUE(tally.QuorumReached());
}

}  // namespace
}  // namespace redlock::internal
