// Copyright 2026 The redlock Authors.
//
// Engine::ReleaseOp: one release of a held lock.
// Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_RELEASE_OP_H_
#define REDLOCK_SRC_ENGINE_RELEASE_OP_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "redlock/keys.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/vote.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation.h"

namespace redlock::internal {

class ReleaseOp final : public NamedOperation {
 public:
  ReleaseOp(OperationHost* host, std::shared_ptr<LockState> state,
            const ReleaseOptions& options, AsyncRedlock::ReleaseCallback done);

  void Start();

 private:
  void OnRound(RoundResult result) override;

  void Fail(absl::Status status) override {
    Deliver(done_, absl::StatusOr<ReleaseReport>(std::move(status)));
  }

  std::shared_ptr<LockState> state_;
  const bool wait_for_all_;
  AsyncRedlock::ReleaseCallback done_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_RELEASE_OP_H_
