// Copyright 2026 The redlock Authors.

#include "src/engine/acquire_op.h"

namespace redlock::internal {

AcquireOp::AcquireOp(OperationHost* host, std::vector<std::string> resources,
                     const AcquireOptions& options,
                     AsyncRedlock::AcquireCallback done,
                     std::optional<SemaphoreSpec> semaphore)
    : NamedOperation(
          host, absl::StrCat(semaphore.has_value() ? "acquire permits of \""
                             : options.shared      ? "acquire shared \""
                                                   : "acquire \"",
                             absl::StrJoin(resources, "\", \""), "\"")),
      resources_(std::move(resources)),
      resource_(resources_.front()),
      semaphore_(std::move(semaphore)),
      keys_(semaphore_.has_value()
                ? std::vector<std::string>()
                : KeysOf(host->options(), resources_, &LockKey)),
      counter_keys_(options.fencing
                        ? KeysOf(host->options(), resources_, &FenceCounterKey)
                        : std::vector<std::string>()),
      ttl_(options.ttl),
      fencing_(options.fencing),
      // A semaphore's acquisition does not look at `shared`
      // (AcquireOptions::shared).
      shared_(options.shared && !semaphore_.has_value()),
      // A writer on one resource, without fencing, waits as a writer
      // after a refusal (WriterAcquireScript).
      may_wait_as_writer_(!shared_ && !options.fencing &&
                          !semaphore_.has_value() && resources_.size() == 1),
      // Any other writer (fenced, or of several resources) marks itself
      // waiting with a script of its own (WriterMarkScript).
      marks_as_writer_(!shared_ && !semaphore_.has_value() &&
                       !may_wait_as_writer_),
      hand_off_(may_wait_as_writer_ && host->options().retry.hand_off &&
                host->options().retry.wake_on_release),
      waiting_key_(WriterWaitingKey(host->options(), resource_)),
      readers_key_(options.shared ? SharedHoldersKey(host->options(), resource_)
                                  : std::string()),
      done_(std::move(done)),
      started_(host->runtime()->Now()),
      schedule_(host->options().retry, started_,
                std::min(options.wait, kLongestWait)),
      retry_timer_(host->runtime()->NewTimer([this] { OnRetryTimer(); })) {
  if (semaphore_.has_value()) {
    // Uncontended, slots 0 .. permits-1 are free: one round trip.
    for (int s = 0; s < semaphore_->permits; ++s) candidates_.push_back(s);
    // Its slot keys change between attempts: its waiters listen on the
    // limit key's channel, where permit releases are announced
    // (SemaphoreAnnounceCommand).
    watch_keys_.push_back(semaphore_->limit_key);
  }
}

void AcquireOp::WatchCancellation(const Cancellation& cancel) {
  cancel_ = cancel.state();
  absl::StatusOr<std::shared_ptr<Mailbox>> mailbox =
      host_->runtime()->GetMailbox();
  if (!mailbox.ok()) {
    // Without a way in from other threads, cancellation is seen at the
    // next attempt (StartAttempt checks it).
    return;
  }
  std::weak_ptr<AcquireOp> weak =
      std::static_pointer_cast<AcquireOp>(shared_from_this());
  subscription_ = cancel_->Subscribe([mailbox = *std::move(mailbox), weak] {
    mailbox->Post([weak] {
      if (auto self = weak.lock()) self->CancelledByCaller();
    });
  });
}

void AcquireOp::StartAttempt() {
  if (!BeginAttempt()) return;
  host_->guard().RefreshMarkers(fencing_);
  RoundConfig config = host_->BaseRound(ttl_);
  if (fencing_) {
    PlanFenced(config);
  } else if (shared_) {
    PlanReader(config);
  } else if (semaphore_.has_value()) {
    PlanSemaphore(config);
  } else {
    // On a contended resource (this client waited for it lately), an
    // attempt announces its win, so that woken waiters stand down.
    const bool announce = watching_ || (host_->wakeups() != nullptr &&
                                        host_->wakeups()->Contended(keys_));
    if (!waits_as_writer_) {
      PlanPlain(config, announce);
    } else if (!PlanWaitingWriter(config, announce)) {
      return;
    }
  }
  // Quietly: no lock was made (see ReleaseCommand). A hand-off waiter's
  // lost attempt (always a writer's) cleans up in OnRound() instead.
  if (!HandsOff()) {
    config.cleanup_on_loss = UndoCommand(/*announce=*/false);
    config.cleanup_skips_denied = true;
  }
  if (marking_) MarkAsWaitingWriter();
  StartRound(std::move(config));
}

void AcquireOp::MarkAsWaitingWriter() {
  const Command mark =
      WriterMarkCommand(keys_, waiting_keys_, waiter_id_, WaitingTtl());
  for (MasterLink* link : host_->links()) {
    link->Send(mark, [](absl::StatusOr<RedisReply>) {});
  }
  // Maybe marked everywhere: its acquisition's end takes the id off.
  marked_.assign(host_->links().size(), true);
}

absl::Duration AcquireOp::WaitingTtl() {
  const absl::Duration left =
      schedule_.WaitLeft(host_->runtime()->Now()).value_or(ttl_);
  return std::max(std::min(ttl_, left), absl::Milliseconds(1));
}

bool AcquireOp::BeginAttempt() {
  if (finished_) return false;
  if (cancel_ != nullptr && cancel_->IsCancelled()) {
    CancelledByCaller();
    return false;
  }
  if (YieldsToWoken()) return false;
  if (QueuesAtOnce()) return false;
  // A hand-off waiter keeps the token it drew when it began to wait
  // (StartWaitingAsWriter): its entries name it, and the key holding it is
  // its own, whichever way it got there.
  if (!HandsOff()) {
    absl::StatusOr<std::string> token = host_->runtime()->NewToken();
    if (!token.ok()) {
      Fail(token.status());
      return false;
    }
    token_ = *std::move(token);
  }
  fence_write_ = false;
  retry_timer_->Cancel();
  next_ = Next::kNone;
  fallback_ = Next::kNone;
  recheck_ = false;
  writer_round_ = false;
  in_attempt_ = true;
  woken_in_attempt_ = false;
  named_by_.clear();
  ++attempts_;
  return true;
}

void AcquireOp::OnRound(RoundResult result) {
  if (fence_write_) {
    OnFenceWritten(std::move(result));
    return;
  }
  in_attempt_ = false;
  last_round_ = ToDuration(result.decided_at - result.start);
  if (HandsOff() && !result.status.ok()) GiveBackAfterLoss(result);
  if (std::exchange(writer_round_, false)) NoteWriterMarks(result);
  ReportAttempt(result);
  if (semaphore_.has_value() && !OnSemaphoreRound(result)) return;
  if (shared_ && !result.status.ok()) NoteRefusals(result);
  // A writer refused for the first time waits as one from now on.
  if (result.status.code() == absl::StatusCode::kAborted && !waits_as_writer_ &&
      !marking_) {
    if (may_wait_as_writer_ && !StartWaitingAsWriter()) return;
    if (marks_as_writer_ && !StartMarkingAsWriter()) return;
  }
  if (!result.status.ok()) {
    RetryOrFail(result.status);
    return;
  }
  won_ = std::move(result);
  if (!fencing_) {
    Succeed(/*fence=*/0);
    return;
  }
  IssueFence();
}

void AcquireOp::GiveBackAfterLoss(const RoundResult& result) {
  // A lost attempt gives back, with its entry (WithdrawCommand), what
  // it holds where it was granted, or may have been (a failed vote: a
  // veto, a timeout). Where it was denied it set nothing, and where the
  // reply is still to come it is left (its token is this waiter's until
  // the next attempt wins or loses there, or the wait ends: Finished()
  // withdraws everywhere): its entry there stays, so that a release can
  // still hand it over. A hand-off heard from a master given back to,
  // with a proof sent so far, may predate the give-back: none counts.
  for (size_t i = 0; i < result.votes.size() && i < counts_from_.size(); ++i) {
    const MasterVote::Kind kind = result.votes[i].kind;
    if (kind == MasterVote::Kind::kDenied ||
        kind == MasterVote::Kind::kPending) {
      continue;
    }
    host_->links()[i]->Send(WithdrawCommand(/*leave_queue=*/false),
                            [](absl::StatusOr<RedisReply>) {});
    counts_from_[i] = attempts_ + 1;
    handed_at_[i].reset();
  }
}

void AcquireOp::NoteWriterMarks(const RoundResult& result) {
  // A master that let this writer in took its id off the waiting set
  // there (WriterAcquireScript).
  for (size_t i = 0; i < result.replies.size() && i < marked_.size(); ++i) {
    const std::optional<RedisReply>& reply = result.replies[i];
    if (reply.has_value() && reply->type == RedisReply::Type::kInteger &&
        reply->integer == 1) {
      marked_[i] = false;
    }
  }
}

void AcquireOp::ReportAttempt(const RoundResult& result) {
  if (Observer* observer = host_->observer()) {
    AttemptEvent event;
    event.resource = resource_;
    event.attempt = attempts_;
    event.outcome = result.status;
    event.elapsed = ToDuration(result.decided_at - result.start);
    event.votes = &result.votes;
    observer->OnAttempt(event);
  }
}

bool AcquireOp::StartWaitingAsWriter() {
  // Held (by readers or a writer): the next attempts mark this writer
  // as waiting where the lock is held, so that new readers queue
  // behind it.
  waits_as_writer_ = true;
  // Its own random id, never a token: releases publish it. A hand-off
  // waiter takes an id whose channel is still subscribed if there is one,
  // which saves subscribing a new one; it is free of anything its last
  // waiter left (that one won: Finished()).
  if (hand_off_) {
    waiter_id_ = host_->WakeupsForWaiting()->TakeIdleWaiterId(
        WaiterHandOffKeyPrefix(host_->options(), resource_));
  }
  if (waiter_id_.empty()) {
    absl::StatusOr<std::string> id = host_->runtime()->NewToken();
    if (!id.ok()) {
      Fail(id.status());
      return false;
    }
    waiter_id_ = *std::move(id);
  }
  waiting_keys_ = {waiting_key_};
  arrival_key_ = absl::StrCat(
      WaiterArrivalKeyPrefix(host_->options(), resource_), waiter_id_);
  if (hand_off_) {  // Woken on release: it will watch.
    // A token of its own for every attempt from now on, never the one of
    // the ordinary attempt just lost: a master may keep that attempt's
    // token-checked undo and write it again after a reconnect
    // (Master::SendCleanup), where with the same token it would delete a
    // key this waiter won there meanwhile, its grant still counted.
    absl::StatusOr<std::string> token = host_->runtime()->NewToken();
    if (!token.ok()) {
      Fail(token.status());
      return false;
    }
    token_ = *std::move(token);
    hand_off_key_ = absl::StrCat(
        WaiterHandOffKeyPrefix(host_->options(), resource_), waiter_id_);
    counts_from_.assign(host_->links().size(), 0);
    handed_at_.assign(host_->links().size(), std::nullopt);
    // Releases publish a hand-off to this waiter on a channel named as
    // its entry: watched with the lock's channels (WatchChannels()),
    // before the attempt that leaves the entries (a hand-off waiter never
    // yields, so it is not watching yet).
  }
  return true;
}

bool AcquireOp::StartMarkingAsWriter() {
  // Held (by readers or a writer): from the next attempt on, this writer
  // marks itself waiting where a resource is held, so that new readers
  // queue behind it as they do behind a writer of one unfenced resource.
  absl::StatusOr<std::string> id = host_->runtime()->NewToken();
  if (!id.ok()) {
    Fail(id.status());
    return false;
  }
  waiter_id_ = *std::move(id);
  waiting_keys_ = KeysOf(host_->options(), resources_, &WriterWaitingKey);
  marking_ = true;
  return true;
}

void AcquireOp::IssueFence() {
  // Fencing: the next token is one more than the highest counter read on
  // masters whose counters can be trusted. A quorum of such reads is
  // needed: any two quorums intersect, so it includes a master that
  // carries every earlier token written back to a quorum.
  uint64_t highest = 0;
  std::string untrusted;
  std::vector<bool> trusted_masters;
  const int trusted = CountTrustedFenceReads(
      won_.replies, host_->guard().FenceVetoFn(), host_->guard().DomainFn(),
      &highest, &untrusted, &trusted_masters);
  if (!host_->guard().membership().QuorumHeld(trusted_masters)) {
    CleanUp(ReleaseCommand(keys_, token_));
    Fail(absl::UnavailableError(absl::StrCat(
        what_, ": fencing unavailable: only ", trusted,
        " masters answered with counters that can be trusted, ",
        host_->guard().membership().DescribeQuorum(), " needed",
        untrusted.empty() ? "" : absl::StrCat("; untrusted: ", untrusted),
        ". The lock was released; no token was issued.")));
    return;
  }
  fence_ = highest + 1;
  fence_write_ = true;
  RoundConfig config;
  config.command = FenceWriteCommand(counter_keys_, fence_);
  config.map_reply = &ScriptVote;
  config.quorum = host_->quorum();
  config.groups = host_->guard().membership().groups();
  // Counted under the same rule as grants: a later acquisition finds our
  // token only through a quorum of judged masters, and one server under
  // two addresses must not count twice.
  host_->guard().JudgeVotes(config);
  config.cleanup_on_loss = ReleaseCommand(keys_, token_);
  StartRound(std::move(config));
}

bool AcquireOp::OnSemaphoreRound(const RoundResult& result) {
  std::vector<int> free_votes(semaphore_->limit, 0);
  int full_on = 0;  // Masters that granted and have no slot left free.
  for (size_t i = 0; i < result.replies.size(); ++i) {
    if (!result.replies[i].has_value()) continue;
    absl::StatusOr<SemaphoreReply> reply =
        ParseSemaphoreReply(*result.replies[i], semaphore_->limit);
    if (!reply.ok()) continue;  // A failed vote already.
    switch (reply->kind) {
      case SemaphoreReply::Kind::kLimitMismatch:
        // Fail closed: counted as a failed vote, never a grant, and it
        // ends the acquisition even if a quorum granted.
        if (result.status.ok()) {
          CleanUp(ReleaseCommand(keys_, token_, /*announce=*/false));
        }
        Fail(absl::FailedPreconditionError(absl::StrCat(
            "semaphore \"", semaphore_->name, "\": this client's limit is ",
            semaphore_->limit, ", master ", host_->links()[i]->name(), " has ",
            reply->stored_limit,
            result.status.ok() ? "; the permits won were released" : "")));
        return false;
      case SemaphoreReply::Kind::kGranted:
        // The candidates were free there (the lost round's clean-up
        // frees them again), and so are the slots it reports.
        for (int s : candidates_) ++free_votes[s];
        for (int s : reply->free_slots) ++free_votes[s];
        if (reply->free_slots.empty()) ++full_on;
        break;
      case SemaphoreReply::Kind::kDenied:
        for (int s : reply->free_slots) ++free_votes[s];
        break;
    }
  }
  if (result.status.ok() && full_on >= host_->quorum() &&
      (watching_ || (host_->wakeups() != nullptr &&
                     host_->wakeups()->Contended(watch_keys_)))) {
    // Full now: woken waiters of this semaphore stand down until the next
    // release (a hint only; every attempt is still a full round).
    SendToAll(SemaphoreAnnounceCommand(semaphore_->limit_key, kTakenMessage));
  }
  if (result.status.code() != absl::StatusCode::kAborted) return true;
  SlotChoice choice = ChooseSlots(free_votes, semaphore_->permits,
                                  host_->quorum(), host_->bitgen());
  candidates_ = std::move(choice.slots);
  if (choice.at_once && quick_retries_ < kQuickRetries) {
    ++quick_retries_;
    // On the next loop turn, not the retry delay.
    ArmRetry(Next::kPoll, absl::ZeroDuration());
    return false;
  }
  return true;
}

void AcquireOp::NoteRefusals(const RoundResult& result) {
  std::vector<std::string> reasons;
  for (const std::optional<RedisReply>& reply : result.replies) {
    if (!reply.has_value()) continue;
    std::string reason = ReaderRefusal(*reply);
    if (!reason.empty()) reasons.push_back(std::move(reason));
  }
  std::sort(reasons.begin(), reasons.end());
  reasons.erase(std::unique(reasons.begin(), reasons.end()), reasons.end());
  refusals_ = absl::StrJoin(reasons, ", ");
}

Command AcquireOp::UndoCommand(bool announce) const {
  if (shared_) {
    return ReaderReleaseCommand(keys_.front(), reader_key_, readers_key_,
                                token_, announce);
  }
  return ReleaseCommand(keys_, token_, announce);
}

Command AcquireOp::WithdrawCommand(bool leave_queue) const {
  return internal::WithdrawCommand(
      keys_.front(), token_, waiting_key_,
      WaiterArrivalKeyPrefix(host_->options(), resource_),
      WaiterHandOffKeyPrefix(host_->options(), resource_), waiter_id_,
      leave_queue);
}

void AcquireOp::OnFenceWritten(RoundResult result) {
  if (result.status.code() == absl::StatusCode::kAborted) {
    // Masters denied: their counter was already at or above our token, so
    // another acquisition wrote it; issuing it again would give two holders
    // one token. The round already sent the release to every master.
    RetryOrFail(absl::AbortedError(absl::StrCat(
        "the fencing counter was already at or above ", fence_,
        " on too many masters (another acquisition wrote it); the lock "
        "was released: ",
        result.status.message())));
    return;
  }
  if (!result.status.ok()) {
    // The round already sent the release to every master.
    Fail(absl::UnavailableError(
        absl::StrCat(what_, ": the fencing token ", fence_,
                     " could not be written to a quorum; the lock was "
                     "released: ",
                     result.status.message())));
    return;
  }
  // The write-back counts inside the validity time.
  const MonotonicTime now = host_->runtime()->Now();
  if (!HasValidity(won_.valid_until, now, host_->options().min_validity)) {
    CleanUp(ReleaseCommand(keys_, token_));
    RetryOrFail(absl::DeadlineExceededError(absl::StrCat(
        "writing the fencing token left ",
        ReadableDuration(Remaining(won_.valid_until, now)), " of validity")));
    return;
  }
  Succeed(fence_);
}

void AcquireOp::CancelledByCaller() {
  if (finished_) return;
  retry_timer_->Cancel();
  std::string released;
  // An acquire round or a fence write-back in flight may have won keys, or
  // win them late: the token-checked release queues behind each master's
  // pending request, so whatever it sets is deleted.
  if (StopRound()) {
    // A hand-off waiter's withdrawal (Finished()) releases it everywhere.
    if (!HandsOff()) CleanUp(UndoCommand(/*announce=*/true));
    if (semaphore_.has_value()) {
      SendToAll(
          SemaphoreAnnounceCommand(semaphore_->limit_key, kReleasedMessage));
    }
    released = "; the attempt in flight was released";
  }
  const int attempts = attempts_;
  Fail(absl::CancelledError(absl::StrCat(
      what_, ": cancelled by the caller after ", attempts,
      attempts == 1 ? " attempt" : " attempts", " in ",
      ReadableDuration(ToDuration(host_->runtime()->Now() - started_)),
      released)));
}

void AcquireOp::Succeed(uint64_t fence) {
  auto state = MakeLockState();
  state->context = host_->lock_context();
  state->SetNames(resources_, keys_);
  state->SetToken(token_);
  state->acquired_at = won_.start;
  state->fence = fence;
  if (semaphore_.has_value()) {
    LockState::Extra& extra = state->MutableExtra();
    extra.slots = candidates_;
    extra.limit_key = semaphore_->limit_key;
    extra.limit = semaphore_->limit;
  }
  if (shared_) {
    LockState::Extra& extra = state->MutableExtra();
    extra.shared = true;
    extra.reader_key = reader_key_;
    extra.readers_key = readers_key_;
  }
  {
    std::lock_guard<std::mutex> lock(state->mu());
    state->valid_until = won_.valid_until;
    state->SetVotesLocked(std::move(won_.votes));
  }
  Finished(/*won=*/true);
  if (Observer* observer = host_->observer()) {
    AcquiredEvent event;
    event.resource = resource_;
    event.attempts = attempts_;
    event.wait = ToDuration(host_->runtime()->Now() - started_);
    event.fence = fence;
    event.handed_over = handed_over_;
    observer->OnAcquired(event);
  }
  Deliver(done_, absl::StatusOr<Lock>(Lock(std::move(state))));
}

void AcquireOp::Finished(bool won) {
  finished_ = true;
  retry_timer_->Cancel();
  Unwatch();
  if (HandsOff() && won && host_->wakeups() != nullptr) {
    // Won: no withdrawal of its own is kept to be sent again later under
    // its id, and whatever is left under it where the lock was not handed
    // over is removed below, before any next waiter's attempt on the same
    // connection.
    host_->wakeups()->LeaveIdleWaiterId(
        WaiterHandOffKeyPrefix(host_->options(), resource_), waiter_id_);
  }
  if (HandsOff() && !won && !proofs_.empty()) {
    // Any master may have handed this waiter the key, up to now: every
    // one withdraws its place and entry and hands the key on, in one
    // step, behind whatever was sent to it before. (No entry was ever
    // left without a proof: a wait that ended with the refusal that
    // made it a waiter, a try-lock's, has nothing to withdraw.)
    CleanUp(WithdrawCommand(/*leave_queue=*/true));
    marked_.clear();
  }
  // Won or given up: new readers need not wait for this writer any more.
  // Only its own id goes (other writers may be waiting too), and only
  // where it may still be.
  for (size_t i = 0; i < marked_.size(); ++i) {
    if (!marked_[i]) continue;
    for (const std::string& key : waiting_keys_) {
      Command unmark;
      unmark.args = {"SREM", key, waiter_id_};
      host_->links()[i]->Send(unmark, [](absl::StatusOr<RedisReply>) {});
    }
    if (arrival_key_.empty()) continue;  // A marking writer: none, no entry.
    Command unqueue;
    unqueue.args = {"DEL", arrival_key_};
    if (HandsOff()) unqueue.args.push_back(hand_off_key_);
    host_->links()[i]->Send(unqueue, [](absl::StatusOr<RedisReply>) {});
  }
  marked_.clear();
  if (cancel_ != nullptr) cancel_->Unsubscribe(subscription_);
  cancel_.reset();
}

void AcquireOp::RetryOrFail(const absl::Status& status) {
  const MonotonicTime now = host_->runtime()->Now();
  std::optional<absl::Duration> delay =
      schedule_.NextDelay(now, host_->bitgen());
  // An outage ends the wait at once (see AsyncRedlock::AcquireAsync).
  if (status.code() == absl::StatusCode::kUnavailable) {
    GiveUp(status);
    return;
  }
  if (Wakeups* wakeups = host_->WakeupsForWaiting(); wakeups != nullptr) {
    std::optional<absl::Duration> left = schedule_.WaitLeft(now);
    if (left.has_value()) {
      last_status_ = status;
      if (!watching_) {
        // Subscribed only now: a release since this attempt went
        // unheard; one more attempt once subscribed will see it.
        recheck_ = WatchChannels();
        watching_ = true;
      }
      if (woken_in_attempt_) {
        // Released while this attempt was in flight: try again soon.
        ArmRetry(Next::kWoken, std::min(woken_delay_, *left));
      } else if (delay.has_value()) {
        ArmRetry(Next::kPoll, *delay);
      } else {
        // No poll fits in the budget; a wake-up still may.
        ArmRetry(Next::kGiveUp, *left);
      }
      return;
    }
  }
  if (delay.has_value()) {
    ArmRetry(Next::kPoll, *delay);
    return;
  }
  GiveUp(status);
}

void AcquireOp::GiveUp(const absl::Status& status) {
  const int attempts = schedule_.attempts();
  std::string summary(LossSummary(status.code()));
  if (shared_ && status.code() == absl::StatusCode::kAborted) {
    summary = absl::StrCat(
        "refused as a reader on too many masters",
        refusals_.empty() ? "" : absl::StrCat(" (", refusals_, ")"));
  }
  if (semaphore_.has_value() && status.code() == absl::StatusCode::kAborted) {
    summary =
        absl::StrCat("no ", semaphore_->permits, " of the ", semaphore_->limit,
                     " slots free together on a quorum of masters");
  }
  Fail(absl::Status(
      status.code(),
      absl::StrCat(
          what_, ": ", summary, " (", attempts,
          attempts == 1 ? " attempt" : " attempts", " in ",
          ReadableDuration(ToDuration(host_->runtime()->Now() - started_)),
          "); last attempt: ", status.message())));
}

void AcquireOp::ArmRetry(Next next, absl::Duration after) {
  if (next == Next::kWoken &&
      (next_ == Next::kPoll || next_ == Next::kGiveUp)) {
    fallback_ = next_;
    fallback_at_ = next_at_;
  } else if (next != Next::kWoken) {
    fallback_ = Next::kNone;
  }
  next_ = next;
  next_at_ = host_->runtime()->Now() + ToChrono(after);
  retry_timer_->Arm(after);
}

void AcquireOp::OnRetryTimer() {
  const Next next = std::exchange(next_, Next::kNone);
  if (next == Next::kGiveUp || next == Next::kSettling) {
    GiveUp(last_status_);
    return;
  }
  // Subscribed before the next attempt: a release after it is heard.
  // Bounded by the subscribers' connect and request timeouts, and by the
  // end of the budget.
  if (watching_ && !ChannelsSettled()) {
    if (std::optional<absl::Duration> left =
            schedule_.WaitLeft(host_->runtime()->Now())) {
      ArmRetry(Next::kSettling, *left);
    } else {
      GiveUp(last_status_);
    }
    return;
  }
  StartAttempt();
}

void AcquireOp::Fail(absl::Status status) {
  Finished();
  if (Observer* observer = host_->observer()) {
    AcquireFailedEvent event;
    event.resource = resource_;
    event.status = status;
    event.attempts = attempts_;
    event.wait = ToDuration(host_->runtime()->Now() - started_);
    observer->OnAcquireFailed(event);
  }
  Deliver(done_, absl::StatusOr<Lock>(std::move(status)));
}

std::vector<std::string> AcquireOp::KeysOf(
    const Options& options, const std::vector<std::string>& resources,
    std::string (*key_of)(const Options&, absl::string_view)) {
  std::vector<std::string> keys;
  keys.reserve(resources.size());
  for (const std::string& r : resources) keys.push_back(key_of(options, r));
  return keys;
}

}  // namespace redlock::internal
