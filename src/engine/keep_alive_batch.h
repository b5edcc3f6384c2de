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
// Loop thread only.

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
  explicit KeepAliveBatcher(OperationHost* host);

  // Cancels every batch in flight: no round of it decides any more. The ops
  // still queued leave the heap (an op that outlives the batcher finds no
  // place in it).
  ~KeepAliveBatcher();

  // `op` wants its next extension at `due`, and accepts it up to `window`
  // earlier (so that it goes out with others). One such extension per op.
  void QueueExtend(KeepAliveOp* op, MonotonicTime due,
                   std::chrono::nanoseconds window);

  // `op` must be told (OnMarginDue) at its margin_at_.
  void QueueMargin(KeepAliveOp* op);

  // `op` is going away: it leaves the heap.
  void Remove(KeepAliveOp* op);

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
  void Update(KeepAliveOp* op);

  void Place(size_t i) { heap_[i].op->heap_index_ = static_cast<int>(i); }
  void SiftUp(size_t i);
  void SiftDown(size_t i);
  // Takes heap_[i] out (its op's heap_index_ becomes -1).
  void Erase(size_t i);

  void Arm();

  // Everything due now: margins reached, and every extension due within
  // its window from now, in one batch.
  void OnTimer();

  void Dispatch(std::vector<std::shared_ptr<KeepAliveOp>> ops);

  void Send(std::vector<std::shared_ptr<KeepAliveOp>> ops);

  // Sends chunk `c` of `batch` to every master in this loop turn. Its locks'
  // validity is counted from now, the moment it is sent.
  void SendChunk(const std::shared_ptr<Batch>& batch, size_t c);

  // A single extension's round config (Engine::BaseRound(), ScriptVote),
  // with the grant verdicts and failure domains judged once per reply
  // (Judged), for every round of a chunk with this TTL.
  std::shared_ptr<const RoundConfig> SharedRound(absl::Duration ttl);

  // While one master's reply to a chunk is fed to the chunk's rounds: that
  // master's grant verdict (RestartGuard::GrantVeto()) and every master's server
  // (RestartGuard::FailureDomain()), judged once, when the reply arrived, instead
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
  bool EveryMasterCanTakeMore() const;

  // Sends the next kChunksPerTurn chunks of the batches still sending, and
  // comes back on a later loop turn if any is left. Back-pressure: while a
  // master has kMaxUnanswered calls unanswered, nothing more is sent; its
  // next answer (or failure: a timeout, a lost connection) resumes it. A
  // master that stops answering thus slows a batch to kMaxUnanswered calls
  // per request_timeout, and never makes its output grow without bound.
  void Pump();

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

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_KEEP_ALIVE_BATCH_H_
