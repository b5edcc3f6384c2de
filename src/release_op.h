// Copyright 2026 The redlock Authors.
//
// Engine::ReleaseOp: one release of a held lock.
// Included only by src/engine.cc. Loop thread only.

#ifndef REDLOCK_SRC_RELEASE_OP_H_
#define REDLOCK_SRC_RELEASE_OP_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/statusor.h"
#include "src/lock_state.h"
#include "src/operation.h"
#include "src/scripts.h"
#include "src/vote.h"

namespace redlock::internal {

class Engine::ReleaseOp final : public Engine::Operation {
 public:
  ReleaseOp(Engine* engine, std::shared_ptr<LockState> state,
            AsyncRedlock::ReleaseCallback done)
      : Operation(engine, absl::StrCat("release \"", state->resource, "\"")),
        state_(std::move(state)),
        done_(std::move(done)) {}

  void Start() {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->released = true;
      state_->valid_until =
          std::min(state_->valid_until, engine_->runtime_->Now());
    }
    RoundConfig config;
    config.command = ReleaseCommand(state_->key, state_->token);
    config.map_reply = &ScriptVote;
    config.quorum = 1;
    config.wait_for_all = true;
    StartRound(std::move(config));
  }

 private:
  void OnRound(RoundResult result) override {
    ReleaseReport report;
    report.released = result.granted;
    report.not_held = result.denied;
    report.failed = result.failed;
    report.votes = std::move(result.votes);
    Deliver(done_, absl::StatusOr<ReleaseReport>(std::move(report)));
  }

  void Fail(absl::Status status) override {
    Deliver(done_, absl::StatusOr<ReleaseReport>(std::move(status)));
  }

  std::shared_ptr<LockState> state_;
  AsyncRedlock::ReleaseCallback done_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_RELEASE_OP_H_
