// Copyright 2026 The redlock Authors.
//
// How AcquireOp plans an attempt for each kind of lock: the command its
// round sends and how each reply becomes a vote.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/engine/acquire_op.h"

namespace redlock::internal {

void AcquireOp::PlanPlain(RoundConfig& config, bool announce) {
  config.command = AcquireCommand(keys_, token_, ttl_, announce);
  // One key: SET NX; several, or announced: the all-or-none script.
  config.map_reply =
      keys_.size() == 1 && !announce ? &AcquireVote : &ScriptVote;
}

void AcquireOp::PlanFenced(RoundConfig& config) {
  config.command = FencedAcquireCommand(
      keys_, counter_keys_, host_->guard().marker_key(), token_, ttl_);
  config.map_reply = &FencedAcquireVote;
  config.keep_replies = true;
  // Won only once a quorum of trusted counter reads is in, judged the
  // way the grants are.
  config.ready_to_win =
      [host = host_, veto = host_->guard().FenceVetoFn(),
       domain = config.failure_domain](
          const std::vector<std::optional<RedisReply>>& replies) {
        std::vector<bool> trusted;
        CountTrustedFenceReads(replies, veto, domain, nullptr, nullptr,
                               &trusted);
        return host->guard().membership().QuorumHeld(trusted);
      };
}

void AcquireOp::PlanReader(RoundConfig& config) {
  reader_key_ = SharedHolderKey(host_->options(), resource_, token_);
  config.command =
      ReaderAcquireCommand(keys_.front(), reader_key_, waiting_key_,
                           readers_key_, token_, ttl_, kMaxReaders);
  config.map_reply = &ReaderAcquireVote;
  config.keep_replies = true;  // For the refusals' reasons.
}

void AcquireOp::PlanSemaphore(RoundConfig& config) {
  keys_.clear();
  for (int s : candidates_) keys_.push_back(semaphore_->slot_keys[s]);
  config.command =
      SemaphoreAcquireCommand(semaphore_->limit_key, semaphore_->slot_keys,
                              token_, ttl_, semaphore_->limit, candidates_);
  if (const RuleOverrides* overrides = host_->overrides()) {
    // A test's rule in place of this one (rule_overrides.h).
    SemaphoreAttempt attempt;
    attempt.limit_key = semaphore_->limit_key;
    attempt.slot_keys = &semaphore_->slot_keys;
    attempt.token = token_;
    attempt.ttl = ttl_;
    attempt.limit = semaphore_->limit;
    attempt.permits = semaphore_->permits;
    overrides->PlanSemaphore(attempt, &config.command, &keys_);
  }
  config.map_reply = &SemaphoreAcquireVote;
  // For the free slots the denials report, and limit mismatches.
  config.keep_replies = true;
}

bool AcquireOp::PlanWaitingWriter(RoundConfig& config, bool announce) {
  // Refused before: new readers are held off while this writer waits, for
  // at most its TTL past this attempt and never past the end of its wait
  // (keys.h, WriterWaitingKey()).
  // Queued by its first refusal's time there (arrival_key_), so that
  // releases name the longest waiting writer (woken on release only).
  const absl::Duration waiting = WaitingTtl();
  HandOffEntry entry;
  if (HandsOff()) {
    absl::StatusOr<std::string> proof = host_->runtime()->NewToken();
    if (!proof.ok()) {
      Fail(proof.status());
      return false;
    }
    entry.key = hand_off_key_;
    entry.proof = *proof;
    const RetryPolicy& policy = host_->options().retry;
    entry.ttl = std::min(waiting, 2 * policy.max_delay + kEntrySlack);
    // Sent after this instant: a key handed over with this proof was set
    // later still.
    proofs_.push_back({attempts_, *std::move(proof), host_->runtime()->Now()});
    if (proofs_.size() > kProofsKept) proofs_.erase(proofs_.begin());
  }
  config.command = WriterAcquireCommand(
      keys_.front(), waiting_key_, token_, ttl_, waiter_id_, waiting, announce,
      host_->wakeups() != nullptr ? arrival_key_ : std::string(),
      HandsOff() ? &entry : nullptr);
  config.map_reply = &ScriptVote;
  config.keep_replies = true;  // Which masters took the mark off.
  writer_round_ = true;
  // Unknown until the replies: maybe marked everywhere.
  marked_.assign(host_->links().size(), true);
  return true;
}

}  // namespace redlock::internal
