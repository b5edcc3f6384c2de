// Copyright 2026 The redlock Authors.

#include "src/engine/extend_op.h"

namespace redlock::internal {

ExtendOp::ExtendOp(OperationHost* host, std::shared_ptr<LockState> state,
                   absl::Duration ttl, AsyncRedlock::ExtendCallback done,
                   bool keep_alive)
    : NamedOperation(host, absl::StrCat("extend \"", state->resource(), "\"")),
      state_(std::move(state)),
      ttl_(ttl),
      done_(std::move(done)),
      keep_alive_(keep_alive) {}

void ExtendOp::Start() {
  if (cancelled()) return;  // The engine went first.
  // Membership records older than a second are read again first (queued
  // ahead of the extension on each connection).
  host_->guard().RefreshMarkers();
  RoundConfig config = host_->BaseRound(ttl_);
  // A semaphore's permit set also keeps its limit key alive: it must
  // outlive every slot it covers.
  // A reader also keeps the shared lock key and the readers' index at
  // least as long as its own key.
  if (state_->shared()) {
    config.command =
        ReaderExtendCommand(state_->key(), state_->reader_key(),
                            state_->readers_key(), state_->token(), ttl_);
  } else {
    config.command =
        state_->limit_key().empty()
            ? ExtendCommand(state_->keys(), state_->token(), ttl_)
            : SemaphoreExtendCommand(state_->limit_key(), state_->keys(),
                                     state_->token(), ttl_, state_->limit());
  }
  config.map_reply = &ScriptVote;
  state_->ExtensionStarted();
  counted_ = true;
  StartRound(std::move(config));
}

void ExtendOp::OnRound(RoundResult result) {
  counted_ = false;  // ConcludeExtension() ends it.
  absl::Status status = ConcludeExtension(host_->observer(), *state_,
                                          std::move(result), keep_alive_);
  if (status.ok()) {
    Deliver(done_, absl::OkStatus());
    return;
  }
  Fail(std::move(status));
}

void ExtendOp::Fail(absl::Status status) {
  if (counted_) {  // Stopped before its round was decided.
    counted_ = false;
    std::lock_guard<std::mutex> lock(state_->mu());
    state_->ExtensionEndedLocked();
  }
  Deliver(done_, std::move(status));
}

}  // namespace redlock::internal
