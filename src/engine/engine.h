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
#include "src/engine/keep_alive_op.h"
#include "src/engine/lock_state.h"
#include "src/engine/master.h"
#include "src/engine/operation_host.h"
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
class ObserveOp;

// Stops a keep-alive (KeepAliveHandle::Stop): KeepAliveOp::Stop().
void StopKeepAlive(KeepAliveOp& op, bool release);

class Engine final : public OperationHost {
 public:
  // Validates `options` (hosts must be numeric, see ParseMasters()) and
  // starts connecting to every master on `base`, through hiredis.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(event_base* base,
                                                        Options options);
  // The same on any runtime: the simulation's (tests/sim) or production's.
  // `overrides`: a test's rules in place of the engine's (rule_overrides.h,
  // tests/sim/unsafe_rules.h); the library never passes any.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      std::unique_ptr<Runtime> runtime, Options options,
      std::shared_ptr<const RuleOverrides> overrides = nullptr);

  Engine(std::unique_ptr<Runtime> runtime, Options options,
         std::vector<MasterAddress> addresses,
         std::shared_ptr<const RuleOverrides> overrides);
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
  absl::StatusOr<std::shared_ptr<KeepAliveOp>> KeepAlive(
      const Lock& lock, absl::Duration ttl, HoldOptions options) override;
  // Leader election: AsyncRedlock's CampaignAsync(), ProclaimAsync(),
  // ResignAsync(), LeaderAsync() and Observe() (the observation, owned by
  // the engine; stop it with ObserveOp::Stop()).
  absl::Status Campaign(absl::string_view name, absl::string_view value,
                        CampaignOptions options,
                        AsyncRedlock::CampaignCallback done);
  absl::Status Proclaim(const Leadership& leadership, absl::string_view value,
                        AsyncRedlock::ExtendCallback done);
  absl::Status Resign(const Leadership& leadership,
                      AsyncRedlock::ReleaseCallback done);
  absl::Status Leader(absl::string_view name,
                      AsyncRedlock::LeaderCallback done);
  absl::StatusOr<std::weak_ptr<ObserveOp>> Observe(absl::string_view name,
                                                   ObserveOptions options);
  // AsyncRedlock::ExtendAsync().
  absl::Status Extend(const Lock& lock, absl::Duration ttl,
                      AsyncRedlock::ExtendCallback done) {
    return Extend(lock, ttl, std::move(done), /*keep_alive=*/false);
  }
  absl::Status Release(const Lock& lock, const ReleaseOptions& options,
                       AsyncRedlock::ReleaseCallback done) override;
  absl::StatusOr<Lock> Adopt(absl::string_view resource,
                             absl::string_view token,
                             const AdoptOptions& options);

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

 private:
  // After any master's handshake or failure: the guard judges every master
  // again (Judge()), then AfterGuardChange().
  void OnMasterStateChange();
  // What follows anything the guard learnt: the attempts waiting for a
  // judged quorum may start, the risks are warned about once every master
  // answered, the observer hears of changed verdicts.
  void AfterGuardChange();
  void MarkReadyToAttempt();
  // MarkReadyToAttempt() once a quorum of distinct servers is judged
  // trustworthy, or every master answered or failed.
  void MaybeReadyToAttempt();
  // Acquire() on resources this call owns (validated, sorted here).
  // `reserved_ok`: the resources may be the library's own names (an
  // election's lease).
  absl::Status AcquireOwned(std::vector<std::string> resources,
                            const AcquireOptions& options,
                            AsyncRedlock::AcquireCallback done,
                            bool reserved_ok = false);
  absl::Status CheckResource(absl::string_view resource,
                             bool reserved_ok = false) const;
  // kInvalidArgument unless `name` is non-empty and its lease's resource
  // (ElectionResource()) is one CheckResource() takes.
  absl::Status CheckElection(absl::string_view name) const;
  // kInvalidArgument unless a keep-alive of `ttl` can run with these.
  absl::Status CheckHold(absl::Duration ttl, absl::Duration* extend_every,
                         absl::Duration* safety_margin,
                         absl::Duration max_hold) const;
  absl::Status AcquireLease(std::string resource, const AcquireOptions& options,
                            AsyncRedlock::AcquireCallback done) override;
  absl::Status CheckTtl(absl::Duration ttl) const;

  // OperationHost: see operation_host.h.
  Wakeups* WakeupsForWaiting() override;
  void Finish(Operation* op, absl::AnyInvocable<void()> deliver) override;
  void WhenReadyToAttempt(absl::AnyInvocable<void()> fn) override;
  KeepAliveBatcher& KeepAliveBatches() override;
  absl::Status Extend(const Lock& lock, absl::Duration ttl,
                      AsyncRedlock::ExtendCallback done,
                      bool keep_alive) override;
  absl::Status CheckLock(const Lock& lock) const override;
  absl::Status CheckLockState(const LockState* state) const override;

  // Health(), the observer's master events, the risk warnings.
  std::unique_ptr<MasterReports> reports_;
  absl::flat_hash_set<std::shared_ptr<Operation>> operations_;
  bool ready_to_attempt_ = false;
  std::vector<absl::AnyInvocable<void()>> attempt_waiters_;
  std::unique_ptr<Timer> deployment_timer_;
  std::unique_ptr<KeepAliveBatcher> keep_alive_batcher_;
  // The durations of the last keep-alive started: the next one with the
  // same shares them.
  CountedRef<KeepAliveDurations> last_keep_alive_durations_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_ENGINE_H_
