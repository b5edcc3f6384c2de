// Copyright 2026 The redlock Authors.
//
// OperationHost: what an operation (acquire, extend, release, keep-alive,
// the keep-alive batches) may ask of the engine that runs it — the door
// between the engine and its operations. The engine is one; the
// operations see it only through this. Loop thread only.
//
// The whole list:
//   runtime()           clock, timers, tokens, the loop's mailbox;
//   options()           the client's options, validated;
//   links()             one per master, in the order configured;
//   guard()             whose grants count (GrantVeto, FenceVeto), the
//                       membership's quorum groups, marker refreshes;
//   quorum()            the plain quorum of this client's masters;
//   observer()          Options::observer, or null;
//   bitgen()            retry jitter;
//   lock_context()      this engine's part of every LockState it makes;
//   completions()       results delivered on a later loop turn;
//   wakeups()           the release subscribers, or null (none made yet);
//   WakeupsForWaiting() the same, made on first use;
//   BaseRound(ttl)      a round's config, votes judged by the guard;
//   SendToAll(command)  a fire-and-forget command to every master;
//   CleanUpEverywhere   an attempt's clean-up, delivered to every master
//                       even across a reconnection;
//   Finish(op, deliver) an operation's one result, and its end;
//   WhenReadyToAttempt  a first attempt waits for a judged quorum;
//   KeepAliveBatches(), Extend(), Release(), CheckLock(),
//   CheckLockState()
//                       what keep-alives need of the engine;
//   AcquireLease(), KeepAlive()
//                       what a campaign needs (election_ops.h).

#ifndef REDLOCK_SRC_ENGINE_OPERATION_HOST_H_
#define REDLOCK_SRC_ENGINE_OPERATION_HOST_H_

#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "src/algorithm/scripts.h"
#include "src/engine/lock_state.h"
#include "src/engine/master.h"
#include "src/engine/quorum_round.h"
#include "src/engine/restart_guard.h"
#include "src/engine/rule_overrides.h"
#include "src/engine/wakeups.h"
#include "src/transport/deferred.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

class KeepAliveBatcher;
class KeepAliveOp;
class Operation;

class OperationHost {
 public:
  OperationHost(const OperationHost&) = delete;
  OperationHost& operator=(const OperationHost&) = delete;

  Runtime* runtime() const { return runtime_.get(); }
  const Options& options() const { return options_; }
  const std::vector<MasterLink*>& links() const { return links_; }
  RestartGuard& guard() const { return *guard_; }
  int quorum() const { return quorum_; }
  // Options::observer, or null.
  Observer* observer() const { return observer_; }
  RuntimeBits& bitgen() { return bitgen_; }
  const LockContextRef& lock_context() const { return lock_context_; }
  Deferred& completions() { return completions_; }
  // The subscribers that wake waiters; null until an acquisition waited
  // (WakeupsForWaiting()), and always without RetryPolicy::wake_on_release.
  Wakeups* wakeups() const { return wakeups_.get(); }
  // TEST ONLY: Engine::set_unbatched_keep_alive_for_testing().
  bool unbatched_keep_alive() const { return unbatched_keep_alive_; }
  // A test's overrides of the engine's rules (rule_overrides.h); null in
  // every engine the library makes.
  const RuleOverrides* overrides() const { return overrides_.get(); }

  // A round's config for a lock of `ttl`: the plain quorum, validity
  // checked against the TTL the masters are sent, votes judged by the
  // restart guard and counted in the membership's groups.
  RoundConfig BaseRound(absl::Duration ttl) const;
  // Sends `command` to every master, answers ignored (a clean-up or an
  // announcement: nothing waits for it).
  void SendToAll(const Command& command);
  // Sends an attempt's clean-up (a token-checked release, undo or
  // withdrawal) to every master with MasterLink::SendCleanup: a master not
  // connected now, or whose connection fails before it answers, gets it on
  // its next connection, while `ttl` (the attempt's) has not passed.
  void CleanUpEverywhere(const Command& command, absl::Duration ttl);

  // The subscribers that wake waiters, made on first use; null without
  // RetryPolicy::wake_on_release.
  virtual Wakeups* WakeupsForWaiting() = 0;
  // Delivers a finished operation's result on a later loop turn and
  // forgets the operation.
  virtual void Finish(Operation* op, absl::AnyInvocable<void()> deliver) = 0;
  // Runs `fn` once a first acquisition attempt can start (at once after
  // that): a quorum of distinct servers judged, every master answered or
  // failed, or a bounded time passed.
  virtual void WhenReadyToAttempt(absl::AnyInvocable<void()> fn) = 0;
  // The keep-alives' shared timer and batches, made on first use.
  virtual KeepAliveBatcher& KeepAliveBatches() = 0;
  // AsyncRedlock::ExtendAsync(); `keep_alive`: made by a keep-alive.
  virtual absl::Status Extend(const Lock& lock, absl::Duration ttl,
                              AsyncRedlock::ExtendCallback done,
                              bool keep_alive) = 0;
  // AsyncRedlock::ReleaseAsync() (a keep-alive stopped with a release).
  virtual absl::Status Release(const Lock& lock, const ReleaseOptions& options,
                               AsyncRedlock::ReleaseCallback done) = 0;
  // AsyncRedlock::AcquireAsync() of `resource`, which may be one of the
  // library's reserved names (an election's lease, ElectionResource()).
  virtual absl::Status AcquireLease(std::string resource,
                                    const AcquireOptions& options,
                                    AsyncRedlock::AcquireCallback done) = 0;
  // AsyncRedlock::KeepAlive(): the keep-alive, owned by the engine.
  virtual absl::StatusOr<std::shared_ptr<KeepAliveOp>> KeepAlive(
      const Lock& lock, absl::Duration ttl, HoldOptions options) = 0;
  // OK if `lock` (or a lock's state) was made by this engine and is held.
  virtual absl::Status CheckLock(const Lock& lock) const = 0;
  virtual absl::Status CheckLockState(const LockState* state) const = 0;

 protected:
  OperationHost(std::unique_ptr<Runtime> runtime, Options options,
                std::shared_ptr<const RuleOverrides> overrides);
  virtual ~OperationHost();

  // Declared in the order they must be made (and, reversed, destroyed).
  const std::shared_ptr<const RuleOverrides> overrides_;
  const std::unique_ptr<Runtime> runtime_;
  Options options_;
  std::vector<std::unique_ptr<Master>> masters_;
  std::vector<MasterLink*> links_;
  // Made once masters_ is: judges them, whose grants count.
  std::unique_ptr<RestartGuard> guard_;
  LockContextRef lock_context_;
  std::unique_ptr<Wakeups> wakeups_;
  int quorum_ = 0;
  RuntimeBits bitgen_;
  Deferred completions_;
  Observer* const observer_;
  bool unbatched_keep_alive_ = false;  // Test only.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_OPERATION_HOST_H_
