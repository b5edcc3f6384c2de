// Copyright 2026 The redlock Authors.

#include "src/engine/membership_tracker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/algorithm/persistence.h"
#include "src/engine/quorum_round.h"

namespace redlock::internal {

int SameServerAs(const std::vector<std::unique_ptr<Master>>& masters,
                 int master) {
  const absl::string_view server = ServerOf(*masters[master]);
  for (int j = 0; j < master && !server.empty(); ++j) {
    if (ServerOf(*masters[j]) == server) return j;
  }
  return -1;
}

MembershipTracker::MembershipTracker(
    const Options& options, const std::vector<std::unique_ptr<Master>>& masters,
    int quorum, const RuleOverrides* overrides)
    : options_(options),
      masters_(masters),
      quorum_(quorum),
      overrides_(overrides) {
  for (const auto& master : masters_) {
    names_.push_back(master->config().address.MemberName());
  }
  duplicate_.assign(masters_.size(), false);
  Update();
}

void MembershipTracker::Update() {
  std::vector<MemberView> views(masters_.size());
  std::vector<std::string> list;
  int unknown = 0;
  for (size_t i = 0; i < masters_.size(); ++i) {
    const MasterIdentity& id = masters_[i]->identity();
    // A server that carries a record is the member it says it is, whatever
    // address this client reaches it by (a proxy, another host name),
    // unless this client named it explicitly (?member=): then the two must
    // agree (JudgeMembership).
    const MasterAddress& address = masters_[i]->config().address;
    names_[i] = id.known && id.has_record && address.member.empty()
                    ? id.member
                    : address.MemberName();
    MemberView& v = views[i];
    v.known = id.known;
    // One server (same run_id) or one member (same name: a replica carries
    // its master's marker) is one entry of the list.
    bool duplicate = SameServerAs(masters_, static_cast<int>(i)) >= 0;
    for (size_t j = 0; j < i && !duplicate; ++j)
      duplicate = names_[j] == names_[i];
    duplicate_[i] = duplicate;
    v.marked = id.known && !id.marker.empty();
    v.has_record = id.known && id.has_record;
    if (id.known) v.record_error = id.record_error;
    v.member = id.member;
    v.record = id.record;
    v.holder_current =
        v.has_record && RecordKept(id.record, id.marker_run_id, id.run_id,
                                   /*durable=*/false);
    // A marker without a record is kept as a record is: in the process it
    // was written to (it has never been given a record since), or durably.
    const bool same_process =
        v.has_record ? v.holder_current
                     : !id.run_id.empty() && id.marker_run_id == id.run_id;
    v.kept = v.marked && (same_process || Durable(id.persistence));
    if (!id.known) {
      ++unknown;
    } else if (!duplicate) {
      list.push_back(names_[i]);
    }
  }
  list_ = Canonical(std::move(list));
  unknown_ = unknown;
  judgement_ =
      JudgeMembership(views, names_, list_, options_.quorum, unknown,
                      /*guard_judges_unmarked=*/options_.restart_guard,
                      /*trust_unknown_records=*/overrides_ != nullptr &&
                          overrides_->TrustUnknownRecords());
  // Two servers that say they are one member (a replica listed beside its
  // master, a copied data directory) cast one vote: the later one none.
  for (size_t i = 0; i < masters_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (names_[j] == names_[i] && judgement_.standing[i].ok() &&
          SameServerAs(masters_, static_cast<int>(i)) != static_cast<int>(j)) {
        judgement_.standing[i] = absl::FailedPreconditionError(absl::StrCat(
            "membership: the same member (", names_[i], ") as master ", j + 1,
            " but another server: one member casts one vote"));
        break;
      }
    }
  }
  UpdateGroups();
}

void MembershipTracker::UpdateGroups() {
  // Replaced only when they change: a round started under other groups
  // counts no grant (JudgeVotes()), so the pointer says "the same groups".
  if (judgement_.adopted.has_value() && !ignored()) {
    // A second address of a server already counted (or of a member) is in
    // no group: its vote is that server's again (and, a denial by the key
    // its first address just set, must not count against the group).
    std::vector<std::string> voting = names_;
    for (size_t i = 0; i < voting.size(); ++i) {
      if (duplicate_[i]) voting[i].clear();
    }
    std::vector<QuorumGroup> groups =
        QuorumGroups(*judgement_.adopted, voting, options_.quorum);
    // Under a steady record the plain count (quorum_ of this client's n
    // masters, one vote per server, non-members vetoed) is enough whenever
    // it asks at least as much as a quorum of the m members: n >= m for a
    // majority (n/2 + 1 distinct members' grants are a majority of m),
    // n == m for every member. It also gives a second address of one
    // server the slack it always had: that address may take the key first
    // and make the first one's answer a denial. Rounds then need no groups.
    const int m = static_cast<int>(judgement_.adopted->members.size());
    const int n = static_cast<int>(masters_.size());
    const bool plain =
        !judgement_.adopted->joint() &&
        (options_.quorum == Quorum::kUnanimous ? n == m : n >= m);
    if (plain) {
      groups_.reset();
    } else if (groups_ == nullptr || !SameGroups(*groups_, groups)) {
      groups_ =
          std::make_shared<const std::vector<QuorumGroup>>(std::move(groups));
    }
  } else {
    groups_.reset();
  }
}

std::string MembershipTracker::RecordSuffixFor(size_t i) const {
  // One server under two addresses is one member, named as its first
  // address: whichever address's write lands first names it for all.
  const int same = SameServerAs(masters_, static_cast<int>(i));
  const std::string& member = names_[same >= 0 ? same : i];
  // The record names the server process it is written to: the one whose
  // handshake this connection read, which is the one the write reaches (a
  // reply comes only after the handshake on the same connection).
  const std::string& holder = masters_[i]->identity().run_id;
  if (judgement_.adopted.has_value()) {
    return judgement_.needs_record[i]
               ? MarkerSuffix(member, *judgement_.adopted, holder)
               : std::string();
  }
  // Refused (two deployments, a record that does not parse): write nothing.
  if (!judgement_.standing[i].ok()) return std::string();
  // A new deployment's record names every master: only once all answered.
  if (unknown_ > 0) return std::string();
  // No record anywhere yet: this client's list makes a new deployment's.
  Membership record;
  record.members = list_;
  record.quorum = options_.quorum;
  record.epoch = 1;
  record.deployment = NewDeploymentId(record.members, record.quorum);
  return MarkerSuffix(member, record, holder);
}

absl::Status MembershipTracker::Veto(int master, bool fresh_read,
                                     Runtime& runtime) const {
  if (ignored()) return absl::OkStatus();  // A test's override only.
  if (const absl::Status& standing = judgement_.standing[master];
      !standing.ok()) {
    return standing;
  }
  if (fresh_read && judgement_.adopted.has_value()) {
    const absl::Duration age =
        ToDuration(runtime.Now() - masters_[master]->identity().marker_read_at);
    if (age > kMembershipStale) {
      return absl::FailedPreconditionError(absl::StrCat(
          "membership: its record was last read ",
          absl::FormatDuration(absl::Trunc(age, absl::Milliseconds(1))),
          " ago (more than ", absl::FormatDuration(kMembershipStale),
          "); it is read again before each attempt"));
    }
  }
  return absl::OkStatus();
}

bool MembershipTracker::QuorumHeld(const std::vector<bool>& counted) const {
  if (groups_ != nullptr) return QuorumOfEvery(*groups_, counted);
  return std::count(counted.begin(), counted.end(), true) >= quorum_;
}

std::string MembershipTracker::DescribeQuorum() const {
  if (groups_ == nullptr) {
    return absl::StrCat("quorum ", quorum_, " of ", masters_.size());
  }
  return VoteTally(static_cast<int>(masters_.size()), groups_).DescribeQuorum();
}

}  // namespace redlock::internal
