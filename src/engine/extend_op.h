// Copyright 2026 The redlock Authors.
//
// Engine::ExtendOp: one extension of a held lock.
// Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_EXTEND_OP_H_
#define REDLOCK_SRC_ENGINE_EXTEND_OP_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/vote.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation.h"

namespace redlock::internal {

// How one extension of a lock ends, whether it went alone (ExtendOp) or in a
// keep-alive's batch (KeepAliveBatcher): the one place an extension's
// decided round is turned into the lock's state. Tells the observer, then
// records the new validity and the votes on the lock if the round was won
// (and the lock not released meanwhile), else keeps the shorter of the old
// and the new validity; so does a won round that ran while another extension
// of the lock did. Ends the round started with LockState::ExtensionStarted().
// Returns OK, or the loss as the caller reports it: 'extend "<resource>":
// <summary>: <votes>'.
inline absl::Status ConcludeExtension(Observer* observer, LockState& state,
                                      RoundResult result, bool keep_alive) {
  if (observer != nullptr) {
    ExtendedEvent event;
    event.resource = state.resource();
    event.status = result.status;
    event.elapsed = ToDuration(result.decided_at - result.start);
    event.votes = &result.votes;
    event.keep_alive = keep_alive;
    observer->OnExtended(event);
  }
  {
    std::lock_guard<std::mutex> lock(state.mu());
    const bool overlapped = state.ExtensionEndedLocked();
    if (result.status.ok() && !state.released) {
      // Another extension ran at once (a KeepAlive and an ExtendAsync): a
      // master may have applied its TTL after ours, so the lock is good
      // only for the shortest validity of them all, the one before included.
      state.valid_until = overlapped
                              ? std::min(state.valid_until, result.valid_until)
                              : result.valid_until;
      state.SetVotesLocked(std::move(result.votes));
    } else {
      // A minority may already carry the new TTL; if it is shorter than
      // what was left, the lock is only as good as the shorter one.
      state.valid_until = std::min(state.valid_until, result.valid_until);
    }
  }
  if (result.status.ok()) return absl::OkStatus();
  absl::string_view summary =
      result.status.code() == absl::StatusCode::kAborted
          ? "lock lost: too many masters no longer hold our token"
          : LossSummary(result.status.code());
  return absl::Status(result.status.code(),
                      absl::StrCat("extend \"", state.resource(), "\": ",
                                   summary, ": ", result.status.message()));
}

class ExtendOp final : public NamedOperation {
 public:
  ExtendOp(OperationHost* host, std::shared_ptr<LockState> state,
           absl::Duration ttl, AsyncRedlock::ExtendCallback done,
           bool keep_alive);

  void Start();

 private:
  void OnRound(RoundResult result) override;

  void Fail(absl::Status status) override;

  std::shared_ptr<LockState> state_;
  const absl::Duration ttl_;
  AsyncRedlock::ExtendCallback done_;
  const bool keep_alive_;
  bool counted_ = false;  // ExtensionStarted() and not yet ended.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_EXTEND_OP_H_
