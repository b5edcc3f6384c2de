// Copyright 2026 The redlock Authors.
//
// KeepAliveBatcher: one engine's keep-alives share one timer, and their
// extensions go out in batches — per master, one BatchExtendScript call per
// up to kMaxBatchExtendKeys keys, pipelined with back-pressure (Pump()) —
// instead of one request per lock per master. Each lock of a batch is still its
// own quorum round (a fed QuorumRound), judged by the same code as a single
// extension and concluded by the same ConcludeExtension(): its own token and
// TTL, its own vetoes (the restart guard, membership, one vote per server),
// validity from the moment its batch was sent, its own lost-lock signal. A
// batch is never all or none across locks: one lock's refusal or bad entry
// fails that lock on that master alone; a master's whole reply that is not
// a well-formed answer (an error, a timeout, garbage) is a failed vote for
// every lock it carried.
// Included only by src/engine/engine.cc. Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_KEEP_ALIVE_BATCH_H_
#define REDLOCK_SRC_ENGINE_KEEP_ALIVE_BATCH_H_

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/validity.h"
#include "src/algorithm/vote.h"
#include "src/engine/keep_alive_op.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation_host.h"
#include "src/engine/quorum_round.h"

namespace redlock::internal {

class KeepAliveBatcher {
 public:
  explicit KeepAliveBatcher(OperationHost* host)
      : host_(host),
        timer_(host->runtime()->NewTimer([this] { OnTimer(); })),
        pump_timer_(host->runtime()->NewTimer([this] { Pump(); })),
        outstanding_(host->links().size(), 0) {}

  // Cancels every batch in flight: no round of it decides any more. The ops
  // still queued leave the heap (an op that outlives the batcher finds no
  // place in it).
  ~KeepAliveBatcher() {
    for (const Entry& entry : heap_) entry.op->heap_index_ = -1;
    for (const std::weak_ptr<Batch>& weak : in_flight_) {
      if (auto batch = weak.lock()) {
        batch->cancelled = true;
        for (QuorumRound& round : batch->round_store) round.Cancel();
      }
    }
  }

  // `op` wants its next extension at `due`, and accepts it up to `window`
  // earlier (so that it goes out with others). One such extension per op.
  void QueueExtend(KeepAliveOp* op, MonotonicTime due,
                   std::chrono::nanoseconds window) {
    op->extend_queued_ = true;
    op->extend_due_ = due;
    widest_window_ = std::max(widest_window_, window);
    Update(op);
  }

  // `op` must be told (OnMarginDue) at its margin_at_.
  void QueueMargin(KeepAliveOp* op) {
    op->margin_queued_ = true;
    Update(op);
  }

  // `op` is going away: it leaves the heap.
  void Remove(KeepAliveOp* op) {
    if (op->heap_index_ < 0) return;
    const MonotonicTime front = heap_.front().when;
    Erase(static_cast<size_t>(op->heap_index_));
    if (heap_.empty() || heap_.front().when != front) Arm();
  }

  // For tests and the bench: requests sent by batches so far (one per chunk
  // per master), and locks they carried.
  int64_t requests() const { return requests_; }

 private:
  // One per op with anything queued, at the earlier of its extension's due
  // time and its margin time; heap_[i].op->heap_index_ == i. An op leaves
  // the heap before it is destroyed (~KeepAliveOp), so the pointer is good.
  struct Entry {
    MonotonicTime when;
    KeepAliveOp* op;
  };
  // A range of a batch's locks sent as one request to every master.
  struct Chunk {
    size_t begin;
    size_t end;
    std::vector<size_t> sent;  // The locks it carried (not lost by then).
  };
  // One batch in flight: its locks, each lock's round (made when its chunk
  // is sent), its chunks, the next chunk to send.
  struct Batch {
    std::vector<std::shared_ptr<KeepAliveOp>> ops;
    // Lock i's round, or null (not sent yet, or lost before its chunk),
    // made in place in `round_store` (one allocation per few rounds).
    std::vector<QuorumRound*> rounds;
    std::deque<QuorumRound> round_store;
    std::vector<Chunk> chunks;
    size_t next = 0;
    bool cancelled = false;
  };
  static constexpr size_t kChunksPerTurn = 4;
  static constexpr int kMaxUnanswered = 8;  // About 400 KB of 500-key calls.

  // Puts `op` in the heap at what it has queued (or takes it out if
  // nothing), and moves the timer if the heap's first time changed.
  void Update(KeepAliveOp* op) {
    const bool was_empty = heap_.empty();
    const MonotonicTime front =
        was_empty ? MonotonicTime() : heap_.front().when;
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

  void Place(size_t i) { heap_[i].op->heap_index_ = static_cast<int>(i); }
  void SiftUp(size_t i) {
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!(heap_[i].when < heap_[parent].when)) break;
      std::swap(heap_[i], heap_[parent]);
      Place(i);
      i = parent;
    }
    Place(i);
  }
  void SiftDown(size_t i) {
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
  // Takes heap_[i] out (its op's heap_index_ becomes -1).
  void Erase(size_t i) {
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

  void Arm() {
    if (heap_.empty()) {
      timer_->Cancel();
      return;
    }
    timer_->Arm(
        std::max(ToDuration(heap_.front().when - host_->runtime()->Now()),
                 absl::ZeroDuration()));
  }

  // Everything due now: margins reached, and every extension due within
  // its window from now, in one batch.
  void OnTimer() {
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

  void Dispatch(std::vector<std::shared_ptr<KeepAliveOp>> ops) {
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

  void Send(std::vector<std::shared_ptr<KeepAliveOp>> ops) {
    auto batch = std::make_shared<Batch>();
    batch->ops = std::move(ops);
    batch->rounds.resize(batch->ops.size(), nullptr);
    // Chunks of at most kMaxBatchExtendKeys keys; a lock never split.
    size_t begin = 0, keys = 0;
    for (size_t i = 0; i < batch->ops.size(); ++i) {
      const LockState& state = *batch->ops[i]->state_;
      const size_t n =
          state.keys().size() + (state.limit_key().empty() ? 0 : 1);
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
    in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(),
                                    [](const std::weak_ptr<Batch>& b) {
                                      return b.expired();
                                    }),
                     in_flight_.end());
    in_flight_.push_back(batch);
  }

  // Sends chunk `c` of `batch` to every master in this loop turn. Its locks'
  // validity is counted from now, the moment it is sent.
  void SendChunk(const std::shared_ptr<Batch>& batch, size_t c) {
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
          [kept](RoundResult result) {
            kept->OnBatchRound(std::move(result));
          });
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

  // A single extension's round config (Engine::BaseRound(), ScriptVote),
  // with the grant verdicts and failure domains judged once per reply
  // (Judged), for every round of a chunk with this TTL.
  std::shared_ptr<const RoundConfig> SharedRound(absl::Duration ttl) {
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

  // While one master's reply to a chunk is fed to the chunk's rounds: that
  // master's grant verdict (Engine::GrantVeto()) and every master's server
  // (Engine::FailureDomain()), judged once, when the reply arrived, instead
  // of once per lock. Every lock's answer in the reply reached this client
  // at that same moment, and nothing between two Feed() calls of the loop
  // reads a master's reply or a marker, so the verdict each lock's round
  // would have asked for is this one. A vote on a master whose reply is not
  // being fed, or outside the loop, is judged afresh.
  class Judged {
   public:
    Judged(KeepAliveBatcher* batcher, int master) : batcher_(batcher) {
      OperationHost* host = batcher->host_;
      batcher->judged_veto_ = host->guard().GrantVeto(master);
      const size_t n = host->links().size();
      batcher->judged_domains_.resize(n);
      for (size_t m = 0; m < n; ++m) {
        batcher->judged_domains_[m] =
            host->guard().FailureDomain(static_cast<int>(m));
      }
      // Which masters share their (known) server with another master.
      batcher->judged_shared_.assign(n, false);
      for (size_t m = 0; m < n; ++m) {
        const absl::string_view domain = batcher->judged_domains_[m];
        if (domain.empty()) continue;
        for (size_t k = m + 1; k < n; ++k) {
          if (batcher->judged_domains_[k] == domain) {
            batcher->judged_shared_[m] = true;
            batcher->judged_shared_[k] = true;
          }
        }
      }
      batcher->judged_master_ = master;
    }
    ~Judged() { batcher_->judged_master_ = -1; }
    Judged(const Judged&) = delete;
    Judged& operator=(const Judged&) = delete;

   private:
    KeepAliveBatcher* const batcher_;
  };

  // True if every master can take another call now.
  bool EveryMasterCanTakeMore() const {
    for (int n : outstanding_) {
      if (n >= kMaxUnanswered) return false;
    }
    return true;
  }

  // Sends the next kChunksPerTurn chunks of the batches still sending, and
  // comes back on a later loop turn if any is left. Back-pressure: while a
  // master has kMaxUnanswered calls unanswered, nothing more is sent; its
  // next answer (or failure: a timeout, a lost connection) resumes it. A
  // master that stops answering thus slows a batch to kMaxUnanswered calls
  // per request_timeout, and never makes its output grow without bound.
  void Pump() {
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

  OperationHost* const host_;
  const std::unique_ptr<Timer> timer_;
  const std::unique_ptr<Timer> pump_timer_;
  // Batches with chunks still to send, oldest first.
  std::deque<std::shared_ptr<Batch>> pumping_;
  // Per master: batch calls sent and not answered yet.
  std::vector<int> outstanding_;
  bool blocked_ = false;     // Pump() waits for a reply.
  std::vector<Entry> heap_;  // A min-heap on `when`: Entry.
  std::chrono::nanoseconds widest_window_{0};
  std::vector<std::weak_ptr<Batch>> in_flight_;
  int64_t requests_ = 0;
  // Judged: the master whose reply is being fed (-1: none), its verdict,
  // and every master's server.
  int judged_master_ = -1;
  absl::Status judged_veto_;
  std::vector<absl::string_view> judged_domains_;
  std::vector<bool> judged_shared_;  // Shares its server with another master.
};

inline void KeepAliveOp::ArmExtendTimer() {
  const MonotonicTime now = host_->runtime()->Now();
  const absl::Duration held = ToDuration(now - state_->acquired_at);
  if (held + extend_every() > max_hold()) return;  // The cap: stop extending.
  host_->KeepAliveBatches().QueueExtend(
      this, now + std::chrono::nanoseconds(durations_->ns.extend_every_ns),
      ExtendWindow());
}

inline void KeepAliveOp::ArmMarginTimer() {
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

inline KeepAliveOp::~KeepAliveOp() {
  if (heap_index_ >= 0) host_->KeepAliveBatches().Remove(this);
}

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_KEEP_ALIVE_BATCH_H_
