// Copyright 2026 The redlock Authors.
//
// Leader election's operations (election.h): a campaign (a fenced
// acquisition, the record's first write, the keep-alive), a proclamation, a
// read of who leads, and an observation that reads again whenever the
// lease's channel speaks or its poll falls due. The lease is a lock like any
// other; everything that decides whether it is held is the lock's code.
// Loop thread only, except LeadershipState's guarded fields.

#ifndef REDLOCK_SRC_ENGINE_ELECTION_OPS_H_
#define REDLOCK_SRC_ENGINE_ELECTION_OPS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "redlock/async_redlock.h"
#include "redlock/election.h"
#include "redlock/lock.h"
#include "src/algorithm/election.h"
#include "src/engine/keep_alive_op.h"
#include "src/engine/operation.h"
#include "src/engine/wakeups.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

struct LeadershipState {
  LeadershipState(std::string name_in, Lock lock_in, std::string value_in)
      : name(std::move(name_in)),
        lock(std::move(lock_in)),
        value(std::move(value_in)) {}

  const std::string name;
  const Lock lock;  // The lease: lock.fence() is the epoch.
  mutable std::mutex mu;
  std::string value;           // Guarded by mu: the last proclaimed.
  uint64_t revision = 1;       // Guarded by mu: value's.
  uint64_t next_revision = 2;  // Guarded by mu: the next Proclaim()'s.
  bool resigned = false;       // Guarded by mu.
  // Loop thread only: the lease's keep-alive, and whether the blocking
  // client pinned its loop for it (Redlock::Campaign()).
  std::weak_ptr<KeepAliveOp> keep_alive;
  bool pinned = false;
};

// kInvalidArgument unless `value` is a usable election value. (A name is
// checked by the engine as the resource its lease is: Engine::CheckElection.)
absl::Status CheckElectionValue(absl::string_view value);

// One campaign: acquires the lease (through the host, as any fenced lock),
// writes the record with revision 1, starts the keep-alive, and delivers
// the Leadership. A lease won but not delivered is released.
class CampaignOp final : public NamedOperation {
 public:
  CampaignOp(OperationHost* host, std::string name, std::string value,
             CampaignOptions options, AsyncRedlock::CampaignCallback done);
  // The acquisition's options (fenced, waiting as `options` says).
  AcquireOptions LeaseOptions() const;
  void OnAcquired(absl::StatusOr<Lock> lock);

 private:
  void OnRound(RoundResult result) override;
  void Fail(absl::Status status) override;
  void OnCancel() override;
  // Releases the lease won, quietly.
  void GiveBack();

  const std::string name_;
  const std::string value_;
  CampaignOptions options_;
  AsyncRedlock::CampaignCallback done_;
  std::optional<Lock> lease_;
  bool finished_ = false;
};

// One Proclaim(): the record rewritten at the next revision.
class ProclaimOp final : public NamedOperation {
 public:
  ProclaimOp(OperationHost* host, std::shared_ptr<LeadershipState> state,
             std::string value, AsyncRedlock::ExtendCallback done);
  void Start();

 private:
  void OnRound(RoundResult result) override;
  void Fail(absl::Status status) override { Deliver(done_, std::move(status)); }

  std::shared_ptr<LeadershipState> state_;
  std::string value_;
  uint64_t revision_ = 0;
  AsyncRedlock::ExtendCallback done_;
};

// The round that reads who leads `name` on every master, and its verdict.
RoundConfig LeaderReadRound(const OperationHost& host, absl::string_view name);
// OK with the leader a quorum holds (judged with `groups` or the plain
// quorum: only votes the round counted as granted), kNotFound when a quorum
// of masters whose grants would count hold no lease, else kUnavailable.
absl::StatusOr<LeaderInfo> JudgeLeaderRound(
    const OperationHost& host, absl::string_view name,
    const std::shared_ptr<const std::vector<QuorumGroup>>& groups,
    const RoundResult& result);

// One LeaderAsync().
class LeaderOp final : public NamedOperation {
 public:
  LeaderOp(OperationHost* host, std::string name,
           AsyncRedlock::LeaderCallback done);
  void Start();

 private:
  void OnRound(RoundResult result) override;
  void Fail(absl::Status status) override {
    Deliver(done_, absl::StatusOr<LeaderInfo>(std::move(status)));
  }

  const std::string name_;
  std::shared_ptr<const std::vector<QuorumGroup>> groups_;
  AsyncRedlock::LeaderCallback done_;
};

// One Observe(): reads who leads at once, then whenever the lease's channel
// carries a message (RetryPolicy::wake_on_release) and every poll_every,
// and tells on_leader of every (epoch, revision) above the last told.
class ObserveOp final : public NamedOperation, private Wakeups::Waiter {
 public:
  ObserveOp(OperationHost* host, std::string name, ObserveOptions options);
  void Start();
  // No on_leader call after this; the engine forgets the operation.
  void Stop();

 private:
  void Read();
  void OnRound(RoundResult result) override;
  void Fail(absl::Status status) override {}
  void OnCancel() override;
  void Wake(Wakeups::Event event, int master,
            absl::string_view successor) override;
  void Quit();

  const std::string name_;
  ObserveOptions options_;
  std::vector<std::string> channels_;
  Wakeups* wakeups_ = nullptr;  // Watched, if not null.
  std::unique_ptr<Timer> poll_;
  std::shared_ptr<const std::vector<QuorumGroup>> groups_;
  bool reading_ = false;
  bool read_again_ = false;  // A wake-up came during a read.
  bool stopped_ = false;
  // The last told (epoch, revision).
  uint64_t epoch_ = 0;
  uint64_t revision_ = 0;
  // Shared with the deliveries queued: false once stopped.
  std::shared_ptr<bool> live_ = std::make_shared<bool>(true);
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_ELECTION_OPS_H_
