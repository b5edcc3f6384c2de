// Copyright 2026 The redlock Authors.
//
// The restart guard: judges each master by the deployment marker (who
// marked it, whether it restarted since and with what persistence), writes
// and re-reads markers and membership records, and says whose grants count
// (GrantVeto()) and whose fencing counters can be trusted (FenceVeto()).
// The engine calls it; it calls nothing of the engine's, and tells it of a
// change only through the `on_change` callback it was made with. Loop
// thread only. docs/design.md, "The restart guard", says why each rule is.

#ifndef REDLOCK_SRC_ENGINE_RESTART_GUARD_H_
#define REDLOCK_SRC_ENGINE_RESTART_GUARD_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "redlock/options.h"
#include "src/algorithm/membership.h"
#include "src/engine/master.h"
#include "src/engine/membership_tracker.h"
#include "src/engine/quorum_round.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

class RestartGuard {
 public:
  // `runtime`, `options` and `masters` must outlive it. `quorum`: this
  // client's plain quorum of its masters. `on_change` runs (on the loop
  // thread, never inside a call of the engine's) after a marker reply or a
  // timer changed what the guard knows, and at each refresh: the engine
  // reports verdicts and wakes the attempts waiting for a judged quorum.
  // `overrides` (null for none; rule_overrides.h) must outlive it too.
  RestartGuard(Runtime* runtime, const Options& options,
               const std::vector<std::unique_ptr<Master>>& masters, int quorum,
               absl::AnyInvocable<void()> on_change,
               const RuleOverrides* overrides = nullptr);
  ~RestartGuard();

  RestartGuard(const RestartGuard&) = delete;
  RestartGuard& operator=(const RestartGuard&) = delete;

  // Late replies to marker writes and reads do nothing from now on: the
  // masters are about to go.
  void Shutdown() { shut_down_ = true; }

  // Judges every master again after a handshake, a failure or a marker
  // read: writes the marker ("trusted" or "reborn", with the membership
  // record) to an unmarked member it can judge, the record to a member
  // that lacks one or may not have kept it, and the first markers of a new
  // deployment once every master answered unmarked. One that answered
  // before the others could not be judged then: each is judged each time.
  void Judge();

  // Called at each attempt, before its commands are sent. Reads again the
  // marker of every connected master this client sees unmarked (another
  // client may have marked it since, our own write may have landed after
  // its reply timed out), and of every master whose membership record is
  // older than kMembershipRefresh (a change of members reaches every
  // client within a second or two). With `fencing`, also of every master
  // whose counters are distrusted though its grants count (an operator may
  // have re-marked it). Nothing is read before this client's bootstrap
  // while no master is marked.
  void RefreshMarkers(bool fencing = false);

  // OK if master `i`'s grants count now; otherwise kFailedPrecondition
  // saying why not. Fail closed: a master not yet judged trustworthy (no
  // handshake on the current connection, no run_id, no marker yet, reborn
  // and up for less than max_ttl) casts no grant. `fresh_read` false
  // (Health(), the observer): without the membership's freshness term,
  // which the next attempt's re-read settles.
  absl::Status GrantVeto(int master, bool fresh_read = true) const;
  // The guard's judgement of master `i`, whether or not
  // Options::restart_guard is on: what GrantVeto() applies when it is.
  absl::Status GuardVerdict(int master) const;
  // OK if master `i`'s fencing counter reads can be trusted: its grants
  // count, and it did not restart since it was marked unless its
  // persistence is durable. Otherwise kFailedPrecondition saying why. Fail
  // closed: kUnknown is a restart.
  absl::Status FenceVeto(int master) const;
  // OK if master `i`'s grants may count under the deployment's membership.
  absl::Status MembershipVeto(int master, bool fresh_read = true) const;
  // The server master `i` is (its run_id), or empty if unknown: one vote
  // per server.
  absl::string_view FailureDomain(int master) const {
    return ServerOf(*masters_[master]);
  }
  // An earlier master with the same run_id, or -1.
  int SameServerAs(int master) const {
    return internal::SameServerAs(masters_, master);
  }
  // Distinct ready servers whose grants the guard and the membership would
  // count now (without the freshness term).
  int JudgedServers() const;

  // Sets `config`'s grant_veto, failure_domain and quorum groups. The votes
  // are counted under this client's groups as they are when each reply
  // arrives: a record read during the attempt must not leave its grants
  // counted under the groups of the attempt's start (found by the
  // simulation, seed 950 of `reconfigure`).
  void JudgeVotes(RoundConfig& config) const;
  std::function<absl::Status(int)> FenceVetoFn() const {
    return [this](int master) { return FenceVeto(master); };
  }
  std::function<absl::string_view(int)> DomainFn() const {
    return [this](int master) { return FailureDomain(master); };
  }
  const MembershipTracker& membership() const { return membership_; }
  const std::string& marker_key() const { return marker_key_; }

 private:
  // GuardVerdict()'s parts: a master that carries no marker (yet), and one
  // that carries "trusted", up for `uptime`.
  absl::Status UnmarkedVerdict() const;
  absl::Status TrustedVerdict(int master, absl::Duration uptime) const;
  // Judge()'s parts. The age of the oldest dated "trusted" marker — about
  // the deployment's age — each measured on its own server's clock; -1s if
  // none has a time, as of `now`. `any_marked`: some master carries a
  // marker.
  absl::Duration DeploymentAge(MonotonicTime now, bool* any_marked) const;
  // Marks each unmarked member "trusted" (up since before the deployment
  // was marked) or "reborn" (restarted since), or leaves it for the rejudge
  // timer when its uptime is too close to the deployment's age to tell.
  void JudgeUnmarked();
  // Writes the record to a marked member without one (the adopted record,
  // or a new deployment's once every master answered) and over a record a
  // member may not have kept, once the adopted one is known current.
  void WriteRecords();
  // Marks a brand-new deployment "trusted" once every master answered
  // unmarked at one moment (markers read long before the newest are read
  // again first); never once this client has seen the deployment marked.
  void MaybeBootstrap();
  static bool Marked(const Master& x) {
    return x.identity().known && !x.identity().marker.empty();
  }
  // Judges the masters' membership records again, and the max_ttl their
  // markers record: after anything that changes what a marker is known to
  // say.
  void Rejudge();
  // Writes the deployment marker to `master` unless one is there, with the
  // membership record RecordSuffixFor() gives it; its local view follows
  // the reply.
  void WriteMarker(Master& master, absl::string_view value);
  // True if a marker may be written to `master`: the membership does not
  // refuse it.
  bool MayWriteMarker(const Master& master) const;
  // Writes the adopted membership record over the one master `i` carries,
  // which it may not have kept: compare-and-set against the record read,
  // keeping the marker's own part. Its local view follows the reply.
  void RestampRecord(size_t i);
  // Reads master `i`'s marker (unless a write or read is on its way),
  // records what it found, then judges every master again.
  void ReadMarker(size_t i);
  size_t IndexOf(const Master& master) const;
  // True if master `i` carries a "trusted" marker written by a client (a
  // dated one) other than the first marker this client read from it: the
  // marker this client saw is gone (lost with the master's data), and a
  // client marked it trusted again — one that never saw the deployment
  // takes masters that all lost their data for a new deployment (found by
  // the simulation, seed 1006982 of rwlock-partial). GuardVerdict() counts
  // its grants once that marker is max_ttl old, FenceVeto() never trusts
  // its counters. An operator's mark by hand (undated) is no replacement.
  bool MarkerReplaced(int master) const;
  // OK unless a master's marker records a max_ttl other than this
  // client's; then kFailedPrecondition naming both. As of the last
  // Rejudge().
  absl::Status MaxTtlAgreement() const { return max_ttl_agreement_; }
  absl::Status ComputeMaxTtlAgreement() const;

  Runtime* const runtime_;
  const Options& options_;
  const std::vector<std::unique_ptr<Master>>& masters_;
  absl::AnyInvocable<void()> on_change_;
  const std::string marker_key_;
  MembershipTracker membership_;
  absl::Status max_ttl_agreement_;
  // This client bootstrapped the deployment or saw it marked: it never
  // bootstraps (again).
  bool deployment_seen_ = false;
  // Judges again the masters Judge() could not tell yet (a young
  // deployment), once it is past the judgement horizon.
  std::unique_ptr<Timer> rejudge_timer_;
  // Before the bootstrap: a marker read that got no answer (a timeout on a
  // slow link) is what the freshness check waits for, and nothing else
  // would ask again while that master stays connected; this asks again a
  // request timeout later.
  std::unique_ptr<Timer> bootstrap_retry_timer_;
  // Per master: a marker write or read is on its way.
  std::vector<bool> marker_busy_;
  // Per master: "<time>:<run_id>" of the first marker this client read
  // from it, empty until one; for MarkerReplaced().
  std::vector<std::string> first_marker_;
  const RuleOverrides* const overrides_;
  bool shut_down_ = false;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_RESTART_GUARD_H_
