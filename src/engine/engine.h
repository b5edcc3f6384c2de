// Copyright 2026 The redlock Authors.
//
// The engine behind AsyncRedlock: owns the masters, runs acquisitions with
// retries, extensions and releases as quorum rounds, and delivers every
// result through a deferred queue so that no user callback runs inside a
// hiredis callback or on the caller's stack. Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_ENGINE_H_
#define REDLOCK_SRC_ENGINE_ENGINE_H_

#include <array>
#include <atomic>
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
#include "src/engine/restart_guard.h"
#include "src/engine/wakeups.h"
#include "src/transport/deferred.h"
#include "src/transport/runtime.h"

struct event_base;

namespace redlock::internal {

class KeepAliveOp;
class KeepAliveBatcher;
class MasterReports;

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
  // The restart guard and the membership this client acts under: whose
  // grants count, quorum groups (RestartGuard::membership()).
  const RestartGuard& guard() const { return *guard_; }
  bool QuorumHeld(const std::vector<bool>& counted) const {
    return guard_->membership().QuorumHeld(counted);
  }
  std::string DescribeQuorum() const {
    return guard_->membership().DescribeQuorum();
  }
  // The membership record this client acts under, if any.
  const std::optional<Membership>& membership() const {
    return guard_->membership().adopted();
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
  void set_legacy_grant_rule_for_testing(bool on) {
    guard_->set_legacy_grant_rule_for_testing(on);
  }
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
    guard_->set_trust_marked_restarts_for_testing(on);
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
    guard_->set_ignore_membership_for_testing(on);
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
    guard_->set_trust_unknown_records_for_testing(on);
  }

 private:
  class Operation;
  class NamedOperation;
  class AcquireOp;
  class ExtendOp;
  class ReleaseOp;
  friend class KeepAliveOp;
  friend class KeepAliveBatcher;

  // After any master's handshake or failure: the guard judges every master
  // again (Judge()), then AfterGuardChange().
  void OnMasterStateChange();
  // What follows anything the guard learnt: the attempts waiting for a
  // judged quorum may start, the risks are warned about once every master
  // answered, the observer hears of changed verdicts.
  void AfterGuardChange();
  // Runs `fn` on a later loop turn once a first acquisition attempt can
  // start: a quorum of masters (distinct servers) is judged by the restart
  // guard, or every master has completed a handshake or failed to connect,
  // or a bounded time has passed. At once after that.
  void WhenReadyToAttempt(absl::AnyInvocable<void()> fn);
  void MarkReadyToAttempt();
  // MarkReadyToAttempt() once a quorum of distinct servers is judged
  // trustworthy, or every master answered or failed.
  void MaybeReadyToAttempt();
  // The guard's, for operations (RestartGuard).
  void RefreshMarkers(bool fencing = false) { guard_->RefreshMarkers(fencing); }
  absl::Status GrantVeto(int master, bool fresh_read = true) const {
    return guard_->GrantVeto(master, fresh_read);
  }
  absl::string_view FailureDomain(int master) const {
    return guard_->FailureDomain(master);
  }
  std::function<absl::Status(int)> FenceVetoFn() const {
    return guard_->FenceVetoFn();
  }
  std::function<absl::string_view(int)> DomainFn() const {
    return guard_->DomainFn();
  }
  void JudgeVotes(RoundConfig& config) const { guard_->JudgeVotes(config); }
  int SameServerAs(int master) const { return guard_->SameServerAs(master); }

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
  // Made once masters_ is: judges them, whose grants count.
  std::unique_ptr<RestartGuard> guard_;
  // Health(), the observer's master events, the risk warnings.
  std::unique_ptr<MasterReports> reports_;
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
  bool ready_to_attempt_ = false;
  std::vector<absl::AnyInvocable<void()>> attempt_waiters_;
  std::unique_ptr<Timer> deployment_timer_;
  bool unbatched_keep_alive_ = false;  // Test only; see the setter.
  std::unique_ptr<KeepAliveBatcher> keep_alive_batcher_;
  // The durations of the last keep-alive started: the next one with the
  // same shares them.
  CountedRef<KeepAliveDurations> last_keep_alive_durations_;
  bool semaphore_majority_of_counters_ = false;  // Unsafe, test only.
  Observer* const observer_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_ENGINE_H_
