// Copyright 2026 The redlock Authors.
//
// What one client knows of its deployment's membership: the member name of
// each of its masters, the record it acts under, and the quorum groups a
// grant must hold, judged again from the masters' markers after each one
// is learnt (JudgeMembership()). The restart guard owns one and updates it;
// rounds read the groups. Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_MEMBERSHIP_TRACKER_H_
#define REDLOCK_SRC_ENGINE_MEMBERSHIP_TRACKER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "redlock/options.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/membership.h"
#include "src/engine/master.h"
#include "src/engine/rule_overrides.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

// The server master `i` is (its run_id as the last handshake read it), or
// empty if unknown. Rounds and fence reads count one vote per server.
inline absl::string_view ServerOf(const Master& master) {
  return master.identity().known ? absl::string_view(master.identity().run_id)
                                 : absl::string_view();
}
// An earlier master of `masters` on the same server as `master`, or -1.
int SameServerAs(const std::vector<std::unique_ptr<Master>>& masters,
                 int master);

class MembershipTracker {
 public:
  // `options` and `masters` must outlive it. `quorum`: this client's count
  // of its own masters (Options::quorum over masters.size()).
  // `overrides` (null for none) outlives it too (rule_overrides.h).
  MembershipTracker(const Options& options,
                    const std::vector<std::unique_ptr<Master>>& masters,
                    int quorum, const RuleOverrides* overrides);

  // Judges the masters' records again from their identities: after
  // anything that changes what a master's marker is known to say.
  void Update();

  // The marker suffix (membership record) to write to master `i` with its
  // marker: the adopted record, or a new deployment's made from this
  // client's list; empty if none may be written (the membership refuses
  // it).
  std::string RecordSuffixFor(size_t i) const;
  // OK if master `i`'s grants may count under the deployment's membership
  // (its standing, and a record read within kMembershipStale of `runtime`'s
  // now, asked only then: this runs at every reply; `fresh_read` false
  // skips the latter).
  absl::Status Veto(int master, bool fresh_read, Runtime& runtime) const;
  // True if `counted` (per master) holds a quorum: of every group of the
  // membership this client acts under, or (before any record) `quorum` of
  // its masters.
  bool QuorumHeld(const std::vector<bool>& counted) const;
  // "quorum 2 of 3", or both groups' during a change of members.
  std::string DescribeQuorum() const;

  // The membership record this client acts under, if any.
  const std::optional<Membership>& adopted() const {
    return judgement_.adopted;
  }
  // Master `i` is a member of the adopted record without a kept record:
  // the current one is to be written to it.
  bool needs_record(size_t i) const { return judgement_.needs_record[i]; }
  // Master `i`'s name in the deployment: the one its record gives it, else
  // MasterAddress::MemberName().
  const std::string& name(size_t i) const { return names_[i]; }
  // The groups a grant must hold; null: one group of every master, the
  // plain quorum. Replaced only when they change, so that the pointer says
  // "the same groups" (JudgeVotes()).
  const std::shared_ptr<const std::vector<QuorumGroup>>& groups() const {
    return groups_;
  }

  // RuleOverrides::IgnoreMembership(): false unless a test says so.
  bool ignored() const {
    return overrides_ != nullptr && overrides_->IgnoreMembership();
  }

 private:
  // The quorum groups of the adopted record (groups()), after Update().
  void UpdateGroups();

  const Options& options_;
  const std::vector<std::unique_ptr<Master>>& masters_;
  const int quorum_;
  // Per master: its member name (name()).
  std::vector<std::string> names_;
  // Per master: a second address of a server (or member) listed earlier.
  std::vector<bool> duplicate_;
  // This client's list as member names, one per server, canonical.
  std::vector<std::string> list_;
  // Masters not heard from yet (no handshake ever), not in list_.
  int unknown_ = 0;
  MembershipJudgement judgement_;
  std::shared_ptr<const std::vector<QuorumGroup>> groups_;
  const RuleOverrides* const overrides_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_MEMBERSHIP_TRACKER_H_
