// Copyright 2026 The redlock Authors.
//
// The engine behind AsyncRedlock: owns the masters, runs acquisitions with
// retries, extensions and releases as quorum rounds, and delivers every
// result through a deferred queue so that no user callback runs inside a
// hiredis callback or on the caller's stack. Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_ENGINE_H_
#define REDLOCK_SRC_ENGINE_ENGINE_H_

#include <atomic>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/async_redlock.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/membership.h"
#include "src/engine/counted_ref.h"
#include "src/engine/lock_state.h"
#include "src/engine/master.h"
#include "src/engine/quorum_round.h"
#include "src/engine/wakeups.h"
#include "src/transport/deferred.h"
#include "src/transport/runtime.h"

struct event_base;

namespace redlock::internal {

class KeepAliveOp;
class KeepAliveBatcher;

// A keep-alive's durations as whole nanoseconds: the TTL, the period and
// the cap rounded down (the masters get the TTL in whole milliseconds
// anyway), the margin up; a cap of InfiniteDuration() is INT64_MAX. Shared
// by the keep-alives an engine starts with the same ones (one reference a
// lock, not 32 bytes).
struct KeepAliveDurations {
  struct Ns {
    int64_t ttl_ns = 0;
    int64_t extend_every_ns = 0;
    int64_t margin_ns = 0;
    int64_t max_hold_ns = 0;
    bool operator==(const Ns& o) const {
      return ttl_ns == o.ttl_ns && extend_every_ns == o.extend_every_ns &&
             margin_ns == o.margin_ns && max_hold_ns == o.max_hold_ns;
    }
  };
  explicit KeepAliveDurations(const Ns& values) : ns(values) {}
  const Ns ns;
  mutable std::atomic<int64_t> refs{0};  // CountedRef's count.
};
// Stops a keep-alive (KeepAliveHandle::Stop); see engine.cc.
void StopKeepAlive(KeepAliveOp& op, bool release);

class Engine {
 public:
  // Validates `options` (hosts must be numeric, see ParseMasters()) and
  // starts connecting to every master on `base`, through hiredis.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(event_base* base,
                                                        Options options);
  // The same on any runtime: the simulation's (tests/sim) or production's.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      std::unique_ptr<Runtime> runtime, Options options);

  Engine(std::unique_ptr<Runtime> runtime, Options options,
         std::vector<MasterAddress> addresses);
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The contracts are those of AsyncRedlock.
  absl::Status Acquire(absl::string_view resource,
                       const AcquireOptions& options,
                       AsyncRedlock::AcquireCallback done);
  // Several resources, all or none (AsyncRedlock::AcquireAsync).
  absl::Status Acquire(absl::Span<const std::string> resources,
                       const AcquireOptions& options,
                       AsyncRedlock::AcquireCallback done);
  // AsyncRedlock::AcquirePermitsAsync(); `options.ttl` resolved.
  absl::Status AcquirePermits(absl::string_view name,
                              const SemaphoreOptions& sem,
                              const AcquireOptions& options,
                              AsyncRedlock::AcquireCallback done);
  absl::StatusOr<std::shared_ptr<KeepAliveOp>> KeepAlive(const Lock& lock,
                                                         absl::Duration ttl,
                                                         HoldOptions options);
  // `keep_alive`: made by a keep-alive (for the observer).
  absl::Status Extend(const Lock& lock, absl::Duration ttl,
                      AsyncRedlock::ExtendCallback done,
                      bool keep_alive = false);
  absl::Status Release(const Lock& lock, const ReleaseOptions& options,
                       AsyncRedlock::ReleaseCallback done);
  absl::StatusOr<Lock> Adopt(absl::string_view resource,
                             absl::string_view token,
                             const AdoptOptions& options);

  const Options& options() const { return options_; }
  // Options::observer, or null.
  Observer* observer() const { return observer_; }
  int quorum() const { return quorum_; }
  // True if `counted` (per master) holds a quorum: of every group of the
  // membership this client acts under, or (before any record) `quorum()`
  // of its masters.
  bool QuorumHeld(const std::vector<bool>& counted) const;
  // "quorum 2 of 3", or both groups' during a change of members.
  std::string DescribeQuorum() const;
  // The membership record this client acts under, if any.
  const std::optional<Membership>& membership() const {
    return membership_.adopted;
  }
  // AsyncRedlock::Health().
  std::vector<MasterHealth> Health() const;
  const std::vector<std::unique_ptr<Master>>& masters() const {
    return masters_;
  }

  // TEST ONLY, and unsafe: the restart guard's grant rule from before it
  // failed closed — a master counts unless it is known to be reborn and
  // young, so a master not yet judged (no marker read or written yet) casts
  // a grant. Kept so the simulation (tests/sim) can show it finds the double
  // grant this allows. Never set outside tests.
  void set_legacy_grant_rule_for_testing(bool on) { legacy_grant_rule_ = on; }
  // TEST ONLY, and unsafe: a semaphore's acquisitions use the
  // majority-of-counters rule (SemaphoreCountersAcquireScript: each master
  // admits while its own count leaves room, taking any free slot of its
  // own, and a majority of admissions wins), which admits more holders than
  // the limit (docs/design.md, "Why not counters"). The permit set's keys
  // are then all of the semaphore's slots (release deletes those holding
  // the token; extension fails). Kept so the simulation (tests/sim) can show
  // the violation. Never set outside tests.
  void set_semaphore_majority_of_counters_for_testing(bool on) {
    semaphore_majority_of_counters_ = on;
  }
  // TEST ONLY, and unsafe: the restart guard's rule from before it knew of
  // partial data loss — a master carrying a trusted marker counts at once,
  // even if it restarted since it was marked with persistence that can
  // lose acknowledged writes (RDB snapshots, appendfsync everysec), and its
  // fencing counters are trusted. Kept so the simulation (tests/sim) can
  // show the double grant this allows. Never set outside tests.
  void set_trust_marked_restarts_for_testing(bool on) {
    trust_marked_restarts_ = on;
  }
  // TEST ONLY, and unsafe: the rule from before deployments knew their
  // members — every client counts a majority of its own list, whatever the
  // masters' membership records say, so clients on two lists (a rolling
  // change of one master) can both win. Kept so the simulation (tests/sim)
  // can show the double grant this allows. Never set outside tests.
  // TEST ONLY: keep-alives extend every lock with its own ExtendOp (one
  // request per lock per master per extension, as before batches), still on
  // the batcher's shared timer. For the bench's before/after figures (the
  // many_locks phase) and tests; safe, only slower.
  void set_unbatched_keep_alive_for_testing(bool on) {
    unbatched_keep_alive_ = on;
  }
  // Requests sent by keep-alive batches so far (each carries up to
  // kMaxBatchExtendKeys keys to one master). For tests and the bench.
  int64_t keep_alive_batch_requests_for_testing() const;
  void set_ignore_membership_for_testing(bool on) {
    ignore_membership_ = on;
    Rejudge();
  }
  // TEST ONLY, and unsafe: the membership rule from before a record had to
  // be known current — a member without a kept record (restarted since it
  // was written: empty, from an older RDB snapshot, a lost AOF tail) counts
  // and is given the newest record this client hears, even when no quorum
  // of the record's members carries it kept, so a client that hears only
  // servers left behind by a change acts under the old record
  // (JudgeMembership()'s `trust_unknown_records`). Kept so the simulation
  // (tests/sim) can show the double grant this allows. Never set outside
  // tests.
  void set_trust_unknown_records_for_testing(bool on) {
    trust_unknown_records_ = on;
    Rejudge();
  }

 private:
  class Operation;
  class NamedOperation;
  class AcquireOp;
  class ExtendOp;
  class ReleaseOp;
  friend class KeepAliveOp;
  friend class KeepAliveBatcher;

  // The restart guard and fencing need to know which masters carry the
  // deployment marker. Called after any master's handshake or failure; every
  // master is judged again each time (one that answered before the others
  // could not be judged then).
  void OnMasterStateChange();
  // Runs `fn` on a later loop turn once a first acquisition attempt can
  // start: a quorum of masters (distinct servers) is judged by the restart
  // guard, or every master has completed a handshake or failed to connect,
  // or a bounded time has passed. At once after that.
  void WhenReadyToAttempt(absl::AnyInvocable<void()> fn);
  void MarkReadyToAttempt();
  // MarkReadyToAttempt() once a quorum of distinct servers is judged
  // trustworthy, or every master answered or failed and no marker write or
  // read of this client's is on its way.
  void MaybeReadyToAttempt();
  // Distinct ready servers the restart guard trusts now (GuardVerdict()).
  int JudgedServers() const;
  // Writes the deployment marker to `master` unless one is there; its local
  // view follows the reply.
  // With the membership record RecordSuffixFor() gives it.
  void WriteMarker(Master& master, absl::string_view value);
  // True if a marker may be written to `master`: the membership does not
  // refuse it (RecordSuffixFor() is not empty).
  bool MayWriteMarker(const Master& master) const;
  // Writes the adopted membership record over the one master `i` carries,
  // which is not kept (it restarted since the record was written to it):
  // compare-and-set against the record read, keeping the marker's own part.
  // Its local view follows the reply.
  void RestampRecord(size_t i);
  size_t IndexOf(const Master& master) const;
  // Called at each acquisition attempt, before its commands are sent. Every
  // connected master this client sees unmarked, with no marker write or read
  // on its way, has its marker read again and is judged again: another
  // client or an operator may have marked it since the handshake, our own
  // write may have timed out after landing, or its judgement was deferred
  // (see OnMasterStateChange()). Nothing is read before this client's
  // bootstrap while no master is marked.
  // Reads master `i`'s marker (unless a marker write or read is on its
  // way), records what it found, then judges every master again.
  void ReadMarker(size_t i);
  // Also reads the marker again of every master whose membership record was
  // last read more than kMembershipRefresh ago, so that a change of the
  // deployment's members (`redlock reconfigure`) reaches every client within
  // a second or two: a grant counts only from a master whose record was read
  // within kMembershipStale (GrantVeto()). With `fencing` (a fenced
  // attempt), also reads again the marker of every master whose fencing
  // counters are distrusted (FenceVeto()) though its grants count: an
  // operator may have re-marked it.
  void RefreshMarkers(bool fencing = false);
  // Judges the masters' membership records again (membership_, groups_):
  // after anything that changes what a master's marker is known to say.
  void Rejudge();
  // The marker suffix (membership record) to write to master `i` with its
  // marker: the adopted record, or a new deployment's made from this
  // client's list; empty if none may be written (the membership refuses it).
  std::string RecordSuffixFor(size_t i) const;
  // OK if master `i`'s grants count now; otherwise kFailedPrecondition
  // saying why not. Fail closed: a master not yet judged trustworthy by the
  // restart guard (no handshake on the current connection, no run_id, no
  // marker yet, reborn and up for less than max_ttl) casts no grant.
  // `fresh_read` false (Health(), the observer): without MembershipVeto()'s
  // freshness term, which the next attempt's re-read settles.
  absl::Status GrantVeto(int master, bool fresh_read = true) const;
  // The restart guard's judgement of master `i`, whether or not
  // Options::restart_guard is on: what GrantVeto() applies when it is.
  absl::Status GuardVerdict(int master) const;
  // OK if master `i`'s fencing counter reads can be trusted: its grants
  // count (GrantVeto()), and it did not restart since it was marked unless
  // its persistence is durable (a restart with part of its data may have
  // brought back counters older than tokens issued). Otherwise
  // kFailedPrecondition saying why. Fail closed: kUnknown is a restart.
  absl::Status FenceVeto(int master) const;
  // True if master `i` carries a "trusted" marker written by a client (a
  // dated one) other than the first marker this client read from it: the
  // marker this client saw is gone (lost with the master's data, a restart
  // or a flush), and a client marked it trusted again — one that never saw
  // the deployment takes masters that all lost their data for a new
  // deployment (found by the simulation, seed 1006982 of rwlock-partial).
  // Its data is not what the deployment stored: GuardVerdict() counts its
  // grants once that marker is max_ttl old, FenceVeto() never trusts its
  // counters. An operator's mark by hand ("trusted:0:<run_id>", undated)
  // is not a replacement.
  bool MarkerReplaced(int master) const;
  // OK unless a master's marker records a max_ttl other than this client's;
  // then kFailedPrecondition naming both.
  absl::Status MaxTtlAgreement() const { return max_ttl_agreement_; }
  absl::Status ComputeMaxTtlAgreement() const;
  std::function<absl::Status(int)> FenceVetoFn() const {
    return [this](int master) { return FenceVeto(master); };
  }
  // The server master `i` is (its run_id as the last handshake read it), or
  // empty if unknown. Rounds and fence reads count one vote per server (and
  // Rejudge() one per member).
  absl::string_view FailureDomain(int master) const;
  // OK if master `i`'s grants may count under the deployment's membership
  // (membership_.standing, and a record read within kMembershipStale).
  absl::Status MembershipVeto(int master, bool fresh_read = true) const;
  // The two above as callables, for rounds and fence reads.
  std::function<absl::Status(int)> VetoFn() const {
    return [this](int master) { return GrantVeto(master); };
  }
  std::function<absl::string_view(int)> DomainFn() const {
    return [this](int master) { return FailureDomain(master); };
  }
  // Sets `config`'s grant_veto, failure_domain and quorum groups. The
  // votes are counted under this client's groups as they are when each
  // reply arrives: a record read during the attempt (the joint phase of a
  // change reaching a client whose list the old record refused) must not
  // leave its grants counted under the groups of the attempt's start (found
  // by the simulation, seed 950 of `reconfigure`: a plain majority of the
  // new list won while an old-list client held the lock).
  void JudgeVotes(RoundConfig& config) const {
    config.grant_veto = VetoFn();
    config.failure_domain = DomainFn();
    config.groups = groups_;
    config.current_groups = [this] { return groups_; };
  }
  // Tells the observer (if any) of each master whose connection or verdict
  // changed since it was last told.
  void ReportMasterChanges();
  // For Health(): an earlier master with the same run_id, or -1.
  int SameServerAs(int master) const;
  // Warns (Options::on_warning, else stderr) about masters that can evict
  // the library's keys, (with the restart guard, unless
  // Options::accept_non_durable_masters) whose persistence can lose
  // acknowledged writes, and whose TLS is not verified: once every master
  // answered or failed, one line per kind of risk counting the masters
  // with it, at most once per client — and, on stderr, per process. A
  // master that shows a risk only later is in Health() and `redlock status`.
  void WarnAboutRisks();

  // The subscribers that wake waiters, made on first use (a client that
  // never waits makes none); null without RetryPolicy::wake_on_release.
  Wakeups* WakeupsForWaiting();
  // Sends `command` to every master, answers ignored (a clean-up or an
  // announcement: nothing waits for it).
  void SendToAll(const Command& command);
  // Acquire() on resources this call owns (validated, sorted here).
  absl::Status AcquireOwned(std::vector<std::string> resources,
                            const AcquireOptions& options,
                            AsyncRedlock::AcquireCallback done);
  absl::Status CheckResource(absl::string_view resource) const;
  absl::Status CheckTtl(absl::Duration ttl) const;
  absl::Status CheckLock(const Lock& lock) const;
  // The same for a lock's state (no handle made for it).
  absl::Status CheckLockState(const LockState* state) const;
  // Delivers a finished operation's result on a later loop turn and forgets
  // the operation.
  void Finish(Operation* op, absl::AnyInvocable<void()> deliver);
  RoundConfig BaseRound(absl::Duration ttl) const;
  // The keep-alives' shared timer and batches, made on first use.
  KeepAliveBatcher& KeepAliveBatches();

  const std::unique_ptr<Runtime> runtime_;
  Options options_;
  std::vector<std::unique_ptr<Master>> masters_;
  std::vector<MasterLink*> links_;
  // This engine's part of every LockState it makes: its address, lock clock
  // and links_' names, in order (packed votes).
  LockContextRef lock_context_;
  // Made by the first acquisition that waits (WakeupsForWaiting()); null
  // until then, and always without RetryPolicy::wake_on_release.
  std::unique_ptr<Wakeups> wakeups_;
  int quorum_;
  RuntimeBits bitgen_;  // Retry jitter.
  absl::flat_hash_set<std::shared_ptr<Operation>> operations_;
  Deferred completions_;
  std::string marker_key_;
  bool ready_to_attempt_ = false;
  // This client bootstrapped the deployment or saw it marked: it never
  // bootstraps (again).
  bool deployment_seen_ = false;
  std::vector<absl::AnyInvocable<void()>> attempt_waiters_;
  // Per kind of risk (WarnAboutRisks()): its line was given.
  std::array<bool, 3> risks_warned_ = {};
  std::unique_ptr<Timer> deployment_timer_;
  // Judges again the masters OnMasterStateChange() could not tell yet (a
  // young deployment), once it is past the judgement horizon.
  std::unique_ptr<Timer> rejudge_timer_;
  // Per master: its name in the deployment's membership: the one its
  // record gives it, else MasterAddress::MemberName() (Rejudge()).
  std::vector<std::string> names_;
  // Per master: a second address of a server (or member) listed earlier.
  std::vector<bool> duplicate_;
  // This client's list as member names, one per server, canonical.
  std::vector<std::string> list_;
  // Masters not heard from yet (no handshake ever), not in list_.
  int unknown_ = 0;
  MembershipJudgement membership_;
  // From membership_.adopted; null: one group of every master, quorum_.
  std::shared_ptr<const std::vector<QuorumGroup>> groups_;
  bool ignore_membership_ = false;
  // ComputeMaxTtlAgreement() as of the last Rejudge().
  absl::Status max_ttl_agreement_;
  bool legacy_grant_rule_ = false;
  bool unbatched_keep_alive_ = false;  // Test only; see the setter.
  std::unique_ptr<KeepAliveBatcher> keep_alive_batcher_;
  // The durations of the last keep-alive started: the next one with the
  // same shares them.
  CountedRef<KeepAliveDurations> last_keep_alive_durations_;
  bool semaphore_majority_of_counters_ = false;  // Unsafe, test only.
  bool trust_marked_restarts_ = false;
  bool trust_unknown_records_ = false;  // Unsafe, test only.
  // Set first thing in ~Engine: late replies to marker reads do nothing.
  bool destroying_ = false;
  // Per master: a marker write or read is on its way.
  std::vector<bool> marker_busy_;
  // Per master: "<time>:<run_id>" of the first marker this client read from
  // it (Rejudge()), empty until one; for MarkerReplaced().
  std::vector<std::string> first_marker_;
  Observer* const observer_;
  // Per master, as the observer was last told: connected, and the verdict.
  std::vector<bool> reported_ready_;
  std::vector<absl::Status> reported_verdict_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_ENGINE_H_
