// Copyright 2026 The redlock Authors.
//
// KeepAliveOp: keeps a held lock alive with the engine's own extensions.
// Included only by src/engine/engine.cc. Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_KEEP_ALIVE_OP_H_
#define REDLOCK_SRC_ENGINE_KEEP_ALIVE_OP_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/algorithm/validity.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation.h"

namespace redlock::internal {

// Keeps a lock alive: extends it every extend_every through the engine's own
// ExtendOp, and declares it lost when an extension fails or validity falls
// below the safety margin first.
class KeepAliveOp final : public Engine::Operation {
 public:
  KeepAliveOp(Engine* engine, std::shared_ptr<LockState> state,
              absl::Duration ttl, absl::Duration extend_every,
              absl::Duration margin, absl::Duration max_hold,
              absl::AnyInvocable<void(const absl::Status&)> on_lost)
      : Operation(engine, absl::StrCat("keep-alive \"", state->resource, "\"")),
        state_(std::move(state)),
        ttl_(ttl),
        extend_every_(extend_every),
        margin_(margin),
        max_hold_(max_hold),
        on_lost_(std::move(on_lost)),
        extend_timer_(engine->runtime_->NewTimer([this] { OnExtendTimer(); })),
        margin_timer_(engine->runtime_->NewTimer([this] { OnMarginTimer(); })) {
  }

  void Start() {
    ArmMarginTimer();
    ArmExtendTimer();
  }

  // Also after the lock was lost: the masters that still hold our token keep
  // it for up to a TTL unless it is released.
  void Stop(bool release) {
    if (stopped_) return;
    stopped_ = true;
    lost_ = true;
    StopTimers();
    if (release && engine_->CheckLock(Lock(state_)).ok()) {
      engine_
          ->Release(Lock(state_), ReleaseOptions(),
                    [](absl::StatusOr<ReleaseReport>) {})
          .IgnoreError();
    }
    engine_->Finish(this, [] {});
  }

 private:
  void ArmExtendTimer() {
    const absl::Duration held =
        ToDuration(engine_->runtime_->Now() - state_->acquired_at);
    if (held + extend_every_ > max_hold_) return;  // The cap: stop extending.
    extend_timer_->Arm(extend_every_);
  }

  void ArmMarginTimer() {
    MonotonicTime valid_until;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      valid_until = state_->valid_until;
    }
    const absl::Duration until_margin =
        Remaining(valid_until, engine_->runtime_->Now()) - margin_;
    margin_timer_->Arm(std::max(until_margin, absl::ZeroDuration()));
  }

  void StopTimers() {
    extend_timer_->Cancel();
    margin_timer_->Cancel();
  }

  void OnExtendTimer() {
    std::weak_ptr<Operation> weak = shared_from_this();
    absl::Status sent = engine_->Extend(
        Lock(state_), ttl_,
        [weak](absl::Status status) {
          if (auto self = weak.lock()) {
            static_cast<KeepAliveOp*>(self.get())->OnExtended(status);
          }
        },
        /*keep_alive=*/true);
    if (!sent.ok()) Lost(sent);
  }

  void OnExtended(const absl::Status& status) {
    if (lost_) return;
    if (!status.ok()) {
      Lost(status);
      return;
    }
    ArmMarginTimer();
    ArmExtendTimer();
  }

  void OnMarginTimer() {
    const absl::Duration held =
        ToDuration(engine_->runtime_->Now() - state_->acquired_at);
    Lost(absl::DeadlineExceededError(
        held + extend_every_ > max_hold_
            ? absl::StrCat(what_, ": held for ", ReadableDuration(held),
                           ", the max_hold cap (",
                           absl::FormatDuration(max_hold_),
                           "); no longer extended")
            : absl::StrCat(what_,
                           ": less than the safety margin of validity left (",
                           absl::FormatDuration(margin_),
                           ") and no extension succeeded in time")));
  }

  // The lock can no longer be trusted: say so once, stop extending. The
  // lock is not released here, and the operation stays registered with the
  // engine: the handle's owner stops it, and that releases whatever the
  // masters still hold.
  // A lock its owner released (ReleaseAsync() while kept alive) is not lost:
  // the keep-alive just stops, without on_lost.
  void Lost(absl::Status reason) {
    if (lost_) return;
    lost_ = true;
    StopTimers();
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->released) return;
    }
    state_->MarkLost(reason);
    if (Observer* observer = engine_->observer()) {
      LostEvent event;
      event.resource = state_->resource;
      event.reason = reason;
      observer->OnLost(event);
    }
    if (on_lost_) {
      engine_->completions_.Post(
          [done = std::move(on_lost_), reason]() mutable { done(reason); });
    }
  }

  // The engine is going away (Cancel): nothing can be released any more.
  void Fail(absl::Status status) override {
    Lost(std::move(status));
    stopped_ = true;
  }

  std::shared_ptr<LockState> state_;
  const absl::Duration ttl_;
  const absl::Duration extend_every_;
  const absl::Duration margin_;
  const absl::Duration max_hold_;
  absl::AnyInvocable<void(const absl::Status&)> on_lost_;
  const std::unique_ptr<Timer> extend_timer_;
  const std::unique_ptr<Timer> margin_timer_;
  bool lost_ = false;     // No more extensions; on_lost_ was posted.
  bool stopped_ = false;  // Stop() ran, or the engine cancelled us.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_KEEP_ALIVE_OP_H_
