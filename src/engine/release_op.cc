// Copyright 2026 The redlock Authors.

#include "src/engine/release_op.h"

namespace redlock::internal {

ReleaseOp::ReleaseOp(OperationHost* host, std::shared_ptr<LockState> state,
                     const ReleaseOptions& options,
                     AsyncRedlock::ReleaseCallback done)
    : NamedOperation(host, absl::StrCat("release \"", state->resource(), "\"")),
      state_(std::move(state)),
      wait_for_all_(options.wait_for_all_masters),
      done_(std::move(done)) {}

void ReleaseOp::Start() {
  {
    std::lock_guard<std::mutex> lock(state_->mu());
    state_->released = true;
    state_->valid_until =
        std::min(state_->valid_until, host_->runtime()->Now());
  }
  if (host_->wakeups() != nullptr && !state_->shared() &&
      state_->limit_key().empty()) {
    // Others may be waiting: this client's next acquisition of the lock
    // soon after yields to them (AcquireOp::YieldsToWoken()).
    host_->wakeups()->NoteReleased(state_->keys());
  }
  RoundConfig config;
  // A reader deletes its own key, and the shared lock key only if it was
  // the last reader there.
  if (state_->shared()) {
    config.command =
        ReaderReleaseCommand(state_->key(), state_->reader_key(),
                             state_->readers_key(), state_->token());
  } else if (!state_->limit_key().empty() || state_->keys().size() != 1) {
    // A permit set announces once, on its semaphore's channel; a
    // multi-resource lock has no queue of waiters.
    config.command = ReleaseCommand(state_->keys(), state_->token(),
                                    /*announce=*/state_->limit_key().empty());
  } else {
    // Names the writer waiting longest on each master, if any
    // (RetryPolicy::successor_grace).
    // Hands it to the one queued longest with a hand-off entry, if any
    // (RetryPolicy::hand_off), whatever this client's own setting.
    config.command = ReleaseCommand(
        state_->key(), state_->token(),
        WriterWaitingKey(host_->options(), state_->resource()),
        WaiterArrivalKeyPrefix(host_->options(), state_->resource()),
        WaiterHandOffKeyPrefix(host_->options(), state_->resource()));
  }
  config.map_reply = &ScriptVote;
  config.quorum = host_->quorum();
  config.groups = host_->guard().membership().groups();
  // Decided as soon as a quorum no longer carries the token (or can no
  // longer confirm it): the masters still to answer were sent the release
  // in the same loop turn and get it all the same, bounded by
  // request_timeout; only the report does not wait for them.
  config.decide_when = wait_for_all_ ? RoundConfig::DecideWhen::kAllVoted
                                     : RoundConfig::DecideWhen::kQuorumCleared;
  // Copied first: the round may end (and this operation with it) before
  // StartRound returns.
  OperationHost* host = host_;
  const std::string limit_key = state_->limit_key();
  StartRound(std::move(config));
  if (!limit_key.empty()) {
    // Behind the release on each connection: heard once the slots are
    // free.
    host->SendToAll(SemaphoreAnnounceCommand(limit_key, kReleasedMessage));
  }
}

void ReleaseOp::OnRound(RoundResult result) {
  ReleaseReport report;
  report.released = result.granted;
  report.not_held = result.denied;
  report.failed = result.failed;
  report.pending = result.pending;
  report.freed = result.quorum_cleared;
  report.votes = std::move(result.votes);
  if (Observer* observer = host_->observer()) {
    ReleasedEvent event;
    event.resource = state_->resource();
    event.report = &report;
    event.held_for = ToDuration(result.start - state_->acquired_at);
    observer->OnReleased(event);
  }
  Deliver(done_, absl::StatusOr<ReleaseReport>(std::move(report)));
}

}  // namespace redlock::internal
