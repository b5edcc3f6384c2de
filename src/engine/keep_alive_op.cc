// Copyright 2026 The redlock Authors.

#include "src/engine/keep_alive_op.h"

#include "src/engine/keep_alive_batch.h"

namespace redlock::internal {

KeepAliveOp::KeepAliveOp(OperationHost* host, std::shared_ptr<LockState> state,
                         CountedRef<KeepAliveDurations> durations,
                         absl::AnyInvocable<void(const absl::Status&)> on_lost)
    : Operation(host),
      extend_queued_(false),
      margin_queued_(false),
      lost_(false),
      stopped_(false),
      durations_(std::move(durations)),
      on_lost_(std::move(on_lost)),
      state_(std::move(state)) {}

KeepAliveDurations::Ns KeepAliveOp::DurationsNs(absl::Duration ttl,
                                                absl::Duration extend_every,
                                                absl::Duration margin,
                                                absl::Duration max_hold) {
  KeepAliveDurations::Ns ns;
  ns.ttl_ns = absl::ToInt64Nanoseconds(ttl);
  ns.extend_every_ns = absl::ToInt64Nanoseconds(extend_every);
  ns.margin_ns = CeilNanoseconds(margin);
  ns.max_hold_ns = absl::ToInt64Nanoseconds(max_hold);
  return ns;
}

void KeepAliveOp::Start() {
  ArmMarginTimer();
  ArmExtendTimer();
}

void KeepAliveOp::Stop(bool release) {
  if (stopped_) return;
  stopped_ = true;
  lost_ = true;
  StopTimers();
  if (release && host_->CheckLock(Lock(state_)).ok()) {
    host_
        ->Release(Lock(state_), ReleaseOptions(),
                  [](absl::StatusOr<ReleaseReport>) {})
        .IgnoreError();
  }
  host_->Finish(this, [] {});
}

void KeepAliveOp::StopTimers() {
  extend_queued_ = false;
  margin_queued_ = false;
}

void KeepAliveOp::ExtendAlone() {
  std::weak_ptr<Operation> weak = shared_from_this();
  absl::Status sent = host_->Extend(
      Lock(state_), ttl(),
      [weak](absl::Status status) {
        if (auto self = weak.lock()) {
          static_cast<KeepAliveOp*>(self.get())->OnExtended(status);
        }
      },
      /*keep_alive=*/true);
  if (!sent.ok()) Lost(sent);
}

void KeepAliveOp::OnBatchRound(RoundResult result) {
  OnExtended(ConcludeExtension(host_->observer(), *state_, std::move(result),
                               /*keep_alive=*/true));
}

void KeepAliveOp::OnExtended(const absl::Status& status) {
  if (lost_) return;
  if (!status.ok()) {
    Lost(status);
    return;
  }
  ArmMarginTimer();
  ArmExtendTimer();
}

void KeepAliveOp::OnMarginDue(MonotonicTime now) {
  if (lost_) return;
  if (now < margin_at_) {
    ArmMarginTimer();  // Moved later by an extension since: queue again.
    return;
  }
  OnMarginTimer();
}

void KeepAliveOp::OnMarginTimer() {
  const absl::Duration held =
      ToDuration(host_->runtime()->Now() - state_->acquired_at);
  Lost(absl::DeadlineExceededError(
      held + extend_every() > max_hold()
          ? absl::StrCat(What(), ": held for ", ReadableDuration(held),
                         ", the max_hold cap (",
                         absl::FormatDuration(max_hold()),
                         "); no longer extended")
          : absl::StrCat(What(),
                         ": less than the safety margin of validity left (",
                         absl::FormatDuration(margin()),
                         ") and no extension succeeded in time")));
}

void KeepAliveOp::Lost(absl::Status reason) {
  if (lost_) return;
  lost_ = true;
  StopTimers();
  {
    std::lock_guard<std::mutex> lock(state_->mu());
    if (state_->released) return;
  }
  state_->MarkLost(reason);
  if (Observer* observer = host_->observer()) {
    LostEvent event;
    event.resource = state_->resource();
    event.reason = reason;
    observer->OnLost(event);
  }
  if (on_lost_) {
    host_->completions().Post(
        [done = std::move(on_lost_), reason]() mutable { done(reason); });
  }
}

void KeepAliveOp::Fail(absl::Status status) {
  Lost(std::move(status));
  stopped_ = true;
}

int64_t KeepAliveOp::CeilNanoseconds(absl::Duration d) {
  int64_t ns = absl::ToInt64Nanoseconds(d);
  if (absl::Nanoseconds(ns) < d && ns < INT64_MAX) ++ns;
  return ns;
}

absl::Duration KeepAliveOp::max_hold() const {
  return durations_->ns.max_hold_ns == INT64_MAX
             ? absl::InfiniteDuration()
             : absl::Nanoseconds(durations_->ns.max_hold_ns);
}

void KeepAliveOp::ArmExtendTimer() {
  const MonotonicTime now = host_->runtime()->Now();
  const absl::Duration held = ToDuration(now - state_->acquired_at);
  if (held + extend_every() > max_hold()) return;  // The cap: stop extending.
  host_->KeepAliveBatches().QueueExtend(
      this, now + std::chrono::nanoseconds(durations_->ns.extend_every_ns),
      ExtendWindow());
}

void KeepAliveOp::ArmMarginTimer() {
  MonotonicTime valid_until;
  {
    std::lock_guard<std::mutex> lock(state_->mu());
    valid_until = state_->valid_until;
  }
  const MonotonicTime now = host_->runtime()->Now();
  const absl::Duration until_margin =
      std::max(Remaining(valid_until, now) - margin(), absl::ZeroDuration());
  const MonotonicTime at = now + ToChrono(until_margin);
  // One entry at a time. A margin that moved later (an extension succeeded)
  // leaves the entry where it is, early: when reached, it finds nothing due
  // and goes back in at the later time (OnTimer). One that moved earlier
  // moves it now.
  const bool later = margin_queued_ && at >= margin_at_;
  margin_at_ = at;
  if (later) return;
  host_->KeepAliveBatches().QueueMargin(this);
}

KeepAliveOp::~KeepAliveOp() {
  if (heap_index_ >= 0) host_->KeepAliveBatches().Remove(this);
}

}  // namespace redlock::internal
