// Copyright 2026 The redlock Authors.
//
// How AcquireOp waits between attempts with RetryPolicy::wake_on_release:
// the channels it watches, the wake-ups and hand-offs it hears, and when a
// woken waiter goes first.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/engine/acquire_op.h"

namespace redlock::internal {

void AcquireOp::Wake(Wakeups::Event event, int master,
                     absl::string_view successor) {
  if (finished_) return;
  const MonotonicTime now = host_->runtime()->Now();
  switch (event) {
    case Wakeups::Event::kSettled:
      if (!ChannelsSettled()) return;
      if (recheck_ && (next_ == Next::kPoll || next_ == Next::kGiveUp)) {
        recheck_ = false;
        // A hand-off waiter's recheck leaves its entries, or takes a lock
        // it finds free: no crowd of woken waiters to spread.
        const absl::Duration jitter =
            HandsOff() ? absl::ZeroDuration() : WakeJitter();
        if (now + ToChrono(jitter) < next_at_) {
          ArmRetry(Next::kWoken, jitter);
        }
        return;
      }
      // Due and now settled (StartAttempt() cancels the give-up).
      if (next_ == Next::kSettling) StartAttempt();
      return;
    case Wakeups::Event::kReleased: {
      // A semaphore's freed slot is found by the refusal's free list:
      // each release heard allows the at-once attempts again.
      quick_retries_ = 0;
      const bool named = NamedBy(master, successor);
      if (in_attempt_) {
        // The most urgent of what is heard during the attempt.
        const absl::Duration delay = WokenDelay(named, successor);
        woken_delay_ =
            woken_in_attempt_ ? std::min(woken_delay_, delay) : delay;
        woken_in_attempt_ = true;
        return;
      }
      if (next_ == Next::kNone) return;  // The fence write-back.
      // Already woken by another master's message; only a quorum of
      // names of its own makes it sooner.
      if (next_ == Next::kWoken && !named) return;
      // Sooner than the poll, never past the end of the budget.
      const absl::Duration delay = WokenDelay(named, successor);
      if (now + ToChrono(delay) < next_at_) ArmRetry(Next::kWoken, delay);
      return;
    }
    case Wakeups::Event::kTaken:
      OnTaken(now);
      return;
    case Wakeups::Event::kGranted:
      if (!HandedOver(master, successor)) OnTaken(now);
      return;
  }
}

void AcquireOp::OnTaken(MonotonicTime now) {
  if (in_attempt_) {
    // Ours, or another's that won: nothing was freed after all.
    woken_in_attempt_ = false;
    return;
  }
  if (next_ != Next::kWoken) return;
  // Another waiter got there first: back to the poll the wake-up put
  // off, or to a new one.
  if (fallback_ != Next::kNone && fallback_at_ > now) {
    ArmRetry(fallback_, ToDuration(fallback_at_ - now));
    return;
  }
  std::optional<absl::Duration> left = schedule_.WaitLeft(now);
  if (!left.has_value()) return;
  const absl::Duration poll =
      JitteredDelay(host_->options().retry, host_->bitgen());
  if (poll < *left) {
    ArmRetry(Next::kPoll, poll);
  } else {
    ArmRetry(Next::kGiveUp, *left);
  }
}

bool AcquireOp::HandedOver(int master, absl::string_view proof) {
  const Proof* mine = nullptr;
  for (const Proof& p : proofs_) {
    if (p.value == proof) mine = &p;
  }
  if (mine == nullptr) return false;
  if (master < 0 || master >= static_cast<int>(handed_at_.size())) {
    return true;
  }
  if (mine->attempt < counts_from_[master]) return true;
  const absl::string_view run = host_->wakeups()->RunId(master);
  if (run.empty() || run != host_->guard().FailureDomain(master)) return true;
  handed_at_[master] = mine->sent_at;
  std::optional<MonotonicTime> start;
  for (const std::optional<MonotonicTime>& at : handed_at_) {
    if (at.has_value() && (!start.has_value() || *at < *start)) start = at;
  }
  RoundConfig config = host_->BaseRound(ttl_);
  config.map_reply = &ScriptVote;
  std::optional<RoundResult> won;
  QuorumRound round(host_->links(),
                    std::make_shared<const RoundConfig>(std::move(config)),
                    host_->runtime(), *start, [&won](RoundResult result) {
                      if (result.status.ok()) won = std::move(result);
                    });
  const MonotonicTime now = host_->runtime()->Now();
  for (size_t i = 0; i < handed_at_.size(); ++i) {
    if (handed_at_[i].has_value()) {
      round.Feed(static_cast<int>(i), RedisReply::Integer(1), now);
    }
  }
  round.Cancel();
  if (!won.has_value()) {
    if (!in_attempt_ && next_ != Next::kNone) {
      // Handed a part: either the rest is on its way, or the masters'
      // queues disagreed on who came first and handed the rest to others.
      // An attempt after the grace settles it: won, or lost and given
      // back, so that the masters hand it on. Not before the slower
      // masters' hand-offs can have come (a release reaches each master
      // after its own delay): at least twice the last attempt's time.
      const absl::Duration grace =
          std::max(host_->options().retry.successor_grace, 2 * last_round_);
      if (host_->runtime()->Now() + ToChrono(grace) < next_at_) {
        ArmRetry(Next::kWoken, grace);
      }
    }
    return true;
  }
  // An attempt in flight is dropped, unanswered: whatever it does on a
  // master (extend this token, or leave an entry that Finished() removes
  // behind it) leaves the lock this waiter's.
  StopRound();
  in_attempt_ = false;
  writer_round_ = false;
  // A master that handed it over took its id, arrival key and entry away
  // then: nothing is left there for Finished() to remove.
  for (size_t i = 0; i < handed_at_.size() && i < marked_.size(); ++i) {
    if (handed_at_[i].has_value()) marked_[i] = false;
  }
  won_ = *std::move(won);
  handed_over_ = true;
  Succeed(/*fence=*/0);
  return true;
}

bool AcquireOp::YieldsToWoken() {
  // A hand-off waiter does not yield: its release handed the lock to the
  // waiter queued longest, if any, and its own attempt queues behind.
  if (attempts_ > 0 || yielded_ || semaphore_.has_value() || shared_ ||
      hand_off_) {
    return false;
  }
  Wakeups* wakeups = host_->wakeups();
  if (wakeups == nullptr) return false;
  const RetryPolicy& policy = host_->options().retry;
  const absl::Duration most =
      policy.successor_grace + std::min(policy.wake_jitter, policy.max_delay);
  if (most <= absl::ZeroDuration() ||
      !wakeups->ReleasedWithin(keys_, most + kYieldMargin)) {
    return false;
  }
  const MonotonicTime now = host_->runtime()->Now();
  const std::optional<absl::Duration> left = schedule_.WaitLeft(now);
  // As long as a waiter its release did not name (WokenDelay()): the
  // named one goes first.
  const absl::Duration jitter = policy.successor_grace + WakeJitter();
  if (!left.has_value() || *left <= jitter) return false;
  yielded_ = true;
  last_status_ = absl::AbortedError(
      "yielded to the waiters its own release woke, and the lock was taken");
  if (!watching_) {
    // Subscribed already (ReleasedWithin() knows only such channels).
    recheck_ = WatchChannels();
    watching_ = true;
  }
  ArmRetry(Next::kWoken, jitter);
  return true;
}

bool AcquireOp::QueuesAtOnce() {
  // A resource this client waited for lately (its channels still
  // subscribed) is likely held: a hand-off waiter's first attempt is
  // then already a waiting writer's, with its entries, so that a release
  // can hand it the lock without a refusal first. Its channels must be
  // subscribed before that attempt leaves entries; an id whose channel
  // still lingers is taken for it if there is one (StartWaitingAsWriter).
  if (attempts_ > 0 || !hand_off_ || waits_as_writer_) return false;
  Wakeups* wakeups = host_->wakeups();
  if (wakeups == nullptr || !wakeups->Contended(keys_)) return false;
  const std::optional<absl::Duration> left =
      schedule_.WaitLeft(host_->runtime()->Now());
  if (!left.has_value() || *left <= absl::ZeroDuration()) return false;
  if (!StartWaitingAsWriter()) return true;
  if (!watching_) {
    WatchChannels();
    watching_ = true;
  }
  if (ChannelsSettled()) return false;
  last_status_ = absl::AbortedError("waiting to subscribe");
  ArmRetry(Next::kSettling, *left);
  return true;
}

bool AcquireOp::NamedBy(int master, absl::string_view successor) {
  if (master < 0 || master >= static_cast<int>(host_->links().size())) {
    return false;
  }
  const bool me = !successor.empty() && successor == waiter_id_;
  if (named_by_.empty()) {
    if (!me) return false;
    named_by_.assign(host_->links().size(), false);
  }
  named_by_[master] = me;
  return me && host_->guard().membership().QuorumHeld(named_by_);
}

absl::Duration AcquireOp::WokenDelay(bool named, absl::string_view successor) {
  if (named) return absl::ZeroDuration();
  if (successor.empty()) return WakeJitter();
  return host_->options().retry.successor_grace + WakeJitter();
}

absl::Duration AcquireOp::WakeJitter() {
  const RetryPolicy& policy = host_->options().retry;
  const int64_t most =
      absl::ToInt64Nanoseconds(std::min(policy.wake_jitter, policy.max_delay));
  if (most <= 0) return absl::ZeroDuration();
  return absl::Nanoseconds(
      absl::Uniform<int64_t>(absl::IntervalClosed, host_->bitgen(), 0, most));
}

void AcquireOp::Unwatch() {
  if (!watching_) return;
  watching_ = false;
  host_->wakeups()->Unwatch(this, WatchKeys());
  host_->wakeups()->Unwatch(this, OwnChannel());
}

bool AcquireOp::WatchChannels() {
  const bool fresh = host_->wakeups()->Watch(this, WatchKeys());
  // A hand-off waiter's channel is new with it: its next attempt, which
  // leaves its entries, waits for the subscription and comes at once.
  const bool own = host_->wakeups()->Watch(this, OwnChannel());
  return fresh || own;
}

bool AcquireOp::ChannelsSettled() const {
  return host_->wakeups()->Settled(WatchKeys()) &&
         host_->wakeups()->Settled(OwnChannel());
}

absl::Span<const std::string> AcquireOp::OwnChannel() const {
  if (!HandsOff()) return {};
  return absl::MakeConstSpan(&hand_off_key_, 1);
}

}  // namespace redlock::internal
