// Copyright 2026 The redlock Authors.

#include "src/engine/keep_alive_batch.h"

namespace redlock::internal {

KeepAliveBatcher::KeepAliveBatcher(OperationHost* host)
    : host_(host),
      timer_(host->runtime()->NewTimer([this] { OnTimer(); })),
      pump_timer_(host->runtime()->NewTimer([this] { Pump(); })),
      outstanding_(host->links().size(), 0) {}

KeepAliveBatcher::~KeepAliveBatcher() {
  for (const Entry& entry : heap_) entry.op->heap_index_ = -1;
  for (const std::weak_ptr<Batch>& weak : in_flight_) {
    if (auto batch = weak.lock()) {
      batch->cancelled = true;
      for (QuorumRound& round : batch->round_store) round.Cancel();
    }
  }
}

void KeepAliveBatcher::QueueExtend(KeepAliveOp* op, MonotonicTime due,
                                   std::chrono::nanoseconds window) {
  op->extend_queued_ = true;
  op->extend_due_ = due;
  widest_window_ = std::max(widest_window_, window);
  Update(op);
}

void KeepAliveBatcher::QueueMargin(KeepAliveOp* op) {
  op->margin_queued_ = true;
  Update(op);
}

void KeepAliveBatcher::Remove(KeepAliveOp* op) {
  if (op->heap_index_ < 0) return;
  const MonotonicTime front = heap_.front().when;
  Erase(static_cast<size_t>(op->heap_index_));
  if (heap_.empty() || heap_.front().when != front) Arm();
}

void KeepAliveBatcher::Update(KeepAliveOp* op) {
  const bool was_empty = heap_.empty();
  const MonotonicTime front = was_empty ? MonotonicTime() : heap_.front().when;
  if (!op->extend_queued_ && !op->margin_queued_) {
    if (op->heap_index_ >= 0) Erase(static_cast<size_t>(op->heap_index_));
  } else {
    MonotonicTime when = MonotonicTime::max();
    if (op->extend_queued_) when = op->extend_due_;
    if (op->margin_queued_) when = std::min(when, op->margin_at_);
    if (op->heap_index_ < 0) {
      op->heap_index_ = static_cast<int>(heap_.size());
      heap_.push_back(Entry{when, op});
      SiftUp(heap_.size() - 1);
    } else {
      const size_t i = static_cast<size_t>(op->heap_index_);
      const MonotonicTime old = heap_[i].when;
      heap_[i].when = when;
      if (when < old) {
        SiftUp(i);
      } else {
        SiftDown(i);
      }
    }
  }
  if (heap_.empty() != was_empty ||
      (!heap_.empty() && (heap_.front().when != front || !timer_->armed()))) {
    Arm();
  }
}

void KeepAliveBatcher::SiftUp(size_t i) {
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!(heap_[i].when < heap_[parent].when)) break;
    std::swap(heap_[i], heap_[parent]);
    Place(i);
    i = parent;
  }
  Place(i);
}

void KeepAliveBatcher::SiftDown(size_t i) {
  for (;;) {
    const size_t left = 2 * i + 1;
    if (left >= heap_.size()) break;
    size_t least = left;
    if (left + 1 < heap_.size() && heap_[left + 1].when < heap_[left].when) {
      least = left + 1;
    }
    if (!(heap_[least].when < heap_[i].when)) break;
    std::swap(heap_[i], heap_[least]);
    Place(i);
    i = least;
  }
  Place(i);
}

void KeepAliveBatcher::Erase(size_t i) {
  heap_[i].op->heap_index_ = -1;
  const size_t last = heap_.size() - 1;
  if (i == last) {
    heap_.pop_back();
    return;
  }
  heap_[i] = heap_[last];
  heap_.pop_back();
  if (i > 0 && heap_[i].when < heap_[(i - 1) / 2].when) {
    SiftUp(i);
  } else {
    SiftDown(i);
  }
}

void KeepAliveBatcher::Arm() {
  if (heap_.empty()) {
    timer_->Cancel();
    return;
  }
  timer_->Arm(std::max(ToDuration(heap_.front().when - host_->runtime()->Now()),
                       absl::ZeroDuration()));
}

void KeepAliveBatcher::OnTimer() {
  const MonotonicTime now = host_->runtime()->Now();
  std::vector<std::shared_ptr<KeepAliveOp>> extend;
  std::vector<std::shared_ptr<KeepAliveOp>> margins;
  std::vector<KeepAliveOp*> popped;
  while (!heap_.empty() && heap_.front().when <= now + widest_window_) {
    KeepAliveOp* op = heap_.front().op;
    Erase(0);
    popped.push_back(op);
    if (op->margin_queued_ && op->margin_at_ <= now) {
      op->margin_queued_ = false;
      margins.push_back(
          std::static_pointer_cast<KeepAliveOp>(op->shared_from_this()));
    }
    if (op->extend_queued_ && op->extend_due_ - op->ExtendWindow() <= now) {
      op->extend_queued_ = false;
      extend.push_back(
          std::static_pointer_cast<KeepAliveOp>(op->shared_from_this()));
    }
  }
  // What they still have queued (not due yet) goes back in.
  for (KeepAliveOp* op : popped) Update(op);
  // Margins first: a lock past its margin is lost, not extended.
  for (const auto& op : margins) op->OnMarginDue(now);
  if (!extend.empty()) Dispatch(std::move(extend));
  Arm();
}

void KeepAliveBatcher::Dispatch(std::vector<std::shared_ptr<KeepAliveOp>> ops) {
  std::vector<std::shared_ptr<KeepAliveOp>> batched;
  batched.reserve(ops.size());
  for (auto& op : ops) {
    if (op->lost_) continue;
    // The single path's checks first: a released lock is not extended.
    if (absl::Status ok = host_->CheckLockState(op->state_.get()); !ok.ok()) {
      op->Lost(std::move(ok));
      continue;
    }
    if (op->state_->shared() || host_->unbatched_keep_alive()) {
      op->ExtendAlone();
    } else {
      batched.push_back(std::move(op));
    }
  }
  if (batched.empty()) return;
  // As a single extension: its grants are judged like an acquisition's,
  // not before a quorum can be judged.
  host_->WhenReadyToAttempt([this, batched = std::move(batched)]() mutable {
    Send(std::move(batched));
  });
}

void KeepAliveBatcher::Send(std::vector<std::shared_ptr<KeepAliveOp>> ops) {
  auto batch = std::make_shared<Batch>();
  batch->ops = std::move(ops);
  batch->rounds.resize(batch->ops.size(), nullptr);
  // Chunks of at most kMaxBatchExtendKeys keys; a lock never split.
  size_t begin = 0, keys = 0;
  for (size_t i = 0; i < batch->ops.size(); ++i) {
    const LockState& state = *batch->ops[i]->state_;
    const size_t n = state.keys().size() + (state.limit_key().empty() ? 0 : 1);
    if (keys + n > kMaxBatchExtendKeys && i > begin) {
      batch->chunks.push_back(Chunk{begin, i, {}});
      begin = i;
      keys = 0;
    }
    keys += n;
  }
  batch->chunks.push_back(Chunk{begin, batch->ops.size(), {}});
  // kChunksPerTurn chunks per loop turn, at most kMaxUnanswered
  // unanswered per master (Pump()): what waits in a connection's output
  // stays below wire.h's kMaxOutputBytes.
  pumping_.push_back(batch);
  Pump();
  in_flight_.erase(
      std::remove_if(in_flight_.begin(), in_flight_.end(),
                     [](const std::weak_ptr<Batch>& b) { return b.expired(); }),
      in_flight_.end());
  in_flight_.push_back(batch);
}

void KeepAliveBatcher::SendChunk(const std::shared_ptr<Batch>& batch,
                                 size_t c) {
  Chunk& chunk = batch->chunks[c];
  // As ExtendOp::Start(): membership records older than a second are read
  // again first, queued ahead of this call on each connection (a batch's
  // later chunks go out later than its first).
  host_->guard().RefreshMarkers();
  std::vector<BatchExtendEntry> entries;
  entries.reserve(chunk.end - chunk.begin);
  // The tokens' text, which the entries view (reserved whole, so that
  // the views stay good).
  std::vector<TokenText> tokens;
  tokens.reserve(chunk.end - chunk.begin);
  const MonotonicTime start = host_->runtime()->Now();
  std::shared_ptr<const RoundConfig> config;
  absl::Duration config_ttl;
  for (size_t i = chunk.begin; i < chunk.end; ++i) {
    const std::shared_ptr<KeepAliveOp>& op = batch->ops[i];
    // Lost or stopped while earlier chunks went out: not extended.
    if (op->lost_) continue;
    const LockState& state = *op->state_;
    BatchExtendEntry entry;
    entry.keys = state.keys();
    entry.token = tokens.emplace_back(state).view();
    entry.ttl = op->ttl();
    if (!state.limit_key().empty()) {
      entry.limit_key = &state.limit_key();
      entry.limit = state.limit();
    }
    entries.push_back(entry);
    chunk.sent.push_back(i);
    // One config for the chunk's locks of one TTL (most chunks have one),
    // made as a single extension's is.
    if (config == nullptr || config_ttl != op->ttl()) {
      config = SharedRound(op->ttl());
      config_ttl = op->ttl();
    }
    // The batch holds the op (batch->ops) as long as its rounds, and a
    // round is fed only from the batch's own reply callbacks.
    KeepAliveOp* const kept = op.get();
    op->state_->ExtensionStarted();  // Ended by ConcludeExtension().
    batch->rounds[i] = &batch->round_store.emplace_back(
        host_->links(), config, host_->runtime(), start,
        [kept](RoundResult result) { kept->OnBatchRound(std::move(result)); });
  }
  if (entries.empty()) return;
  // One command for every master (a master keeps it for an EVAL resend).
  // Its RESP text is made once, here, for all of them.
  std::shared_ptr<const Command> command =
      std::make_shared<Command>(EncodedBatchExtendCommand(entries));
  for (size_t m = 0; m < host_->links().size(); ++m) {
    ++outstanding_[m];
    ++requests_;
    host_->links()[m]->Send(
        command, [this, batch, c, m](absl::StatusOr<RedisReply> reply) {
          if (batch->cancelled) return;  // The batcher is gone.
          --outstanding_[m];
          Chunk& chunk = batch->chunks[c];
          const int master = static_cast<int>(m);
          // Every lock's answer arrived now, in this reply.
          const MonotonicTime received_at = host_->runtime()->Now();
          if (!reply.ok()) {
            for (size_t i : chunk.sent) {
              batch->rounds[i]->Feed(master, reply.status(), received_at);
            }
          } else {
            absl::StatusOr<std::vector<RedisReply>> split =
                SplitBatchExtendReply(*std::move(reply), chunk.sent.size());
            Judged judged(this, master);
            for (size_t j = 0; j < chunk.sent.size(); ++j) {
              const size_t i = chunk.sent[j];
              if (split.ok()) {
                batch->rounds[i]->Feed(master, (*split)[j], received_at);
              } else {
                batch->rounds[i]->Feed(master, split.status(), received_at);
              }
            }
          }
          if (!batch->cancelled && blocked_) Pump();
        });
  }
}

std::shared_ptr<const RoundConfig> KeepAliveBatcher::SharedRound(
    absl::Duration ttl) {
  auto config = std::make_shared<RoundConfig>(host_->BaseRound(ttl));
  config->map_reply = &ScriptVote;
  // JudgeVotes()'s, with the replying master's verdict and every
  // master's server judged once per reply (Judged()).
  config->grant_veto = [this](int master) {
    return judged_master_ == master ? judged_veto_
                                    : host_->guard().GrantVeto(master);
  };
  // While a reply is fed, a master whose server no other master shares
  // has no domain to compare (empty): QuorumRound counts one grant per
  // domain, and a domain no other master has can match no earlier grant,
  // so the round decides exactly as with the domain itself, without
  // comparing it to every grant so far.
  config->failure_domain = [this](int master) {
    if (judged_master_ < 0) return host_->guard().FailureDomain(master);
    return judged_shared_[master] ? judged_domains_[master]
                                  : absl::string_view();
  };
  return config;
}

bool KeepAliveBatcher::EveryMasterCanTakeMore() const {
  for (int n : outstanding_) {
    if (n >= kMaxUnanswered) return false;
  }
  return true;
}

void KeepAliveBatcher::Pump() {
  blocked_ = false;
  size_t sent = 0;
  while (!pumping_.empty() && sent < kChunksPerTurn) {
    if (!EveryMasterCanTakeMore()) {
      blocked_ = true;
      return;
    }
    const std::shared_ptr<Batch> batch = pumping_.front();
    if (batch->next < batch->chunks.size()) {
      SendChunk(batch, batch->next++);
      ++sent;
    }
    if (batch->next >= batch->chunks.size()) pumping_.pop_front();
  }
  if (!pumping_.empty()) pump_timer_->Arm(absl::ZeroDuration());
}

}  // namespace redlock::internal
