// Copyright 2026 The redlock Authors.
//
// KeepAliveOp: keeps a held lock alive with the engine's own extensions.
// Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_KEEP_ALIVE_OP_H_
#define REDLOCK_SRC_ENGINE_KEEP_ALIVE_OP_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/algorithm/validity.h"
#include "src/engine/counted_ref.h"
#include "src/engine/extend_op.h"
#include "src/engine/lock_state.h"
#include "src/engine/operation.h"

namespace redlock::internal {

class KeepAliveBatcher;

// A keep-alive's durations as whole nanoseconds: the TTL, the period and
// the cap rounded down (the masters get the TTL in whole milliseconds
// anyway), the margin up; a cap of InfiniteDuration() is INT64_MAX. Shared
// by the keep-alives an engine starts with the same ones (one reference a
// lock, not 32 bytes).
struct KeepAliveDurations {
  struct Ns {
    int64_t ttl_ns = 0;
    int64_t extend_every_ns = 0;
    int64_t margin_ns = 0;
    int64_t max_hold_ns = 0;
    bool operator==(const Ns& o) const {
      return ttl_ns == o.ttl_ns && extend_every_ns == o.extend_every_ns &&
             margin_ns == o.margin_ns && max_hold_ns == o.max_hold_ns;
    }
  };
  explicit KeepAliveDurations(const Ns& values) : ns(values) {}
  const Ns ns;
  mutable std::atomic<int64_t> refs{0};  // CountedRef's count.
};

// Keeps a lock alive: extends it every extend_every, and declares it lost
// when an extension fails or validity falls below the safety margin first.
// It owns no timer: the engine's KeepAliveBatcher (keep_alive_batch.h) wakes
// it when an extension falls due (or up to a tenth of extend_every earlier,
// to go with others in one batch) and when its margin is reached. A lock
// (one or several keys) or a semaphore's permit set is extended in the
// batcher's batches; a reader of a read-write lock, or every lock while
// Engine::set_unbatched_keep_alive_for_testing is on, by its own ExtendOp.
class KeepAliveOp final : public Operation {
 public:
  KeepAliveOp(OperationHost* host, std::shared_ptr<LockState> state,
              CountedRef<KeepAliveDurations> durations,
              absl::AnyInvocable<void(const absl::Status&)> on_lost);

  // What KeepAliveDurations holds, from the durations asked for.
  static KeepAliveDurations::Ns DurationsNs(absl::Duration ttl,
                                            absl::Duration extend_every,
                                            absl::Duration margin,
                                            absl::Duration max_hold);

  // Leaves the batcher's heap.
  ~KeepAliveOp() override;

  void Start();

  // Also after the lock was lost: the masters that still hold our token keep
  // it for up to a TTL unless it is released.
  void Stop(bool release);

 private:
  friend class KeepAliveBatcher;

  // keep-alive "recalc-ratings".
  std::string What() const override {
    return absl::StrCat("keep-alive \"", state_->resource(), "\"");
  }

  // They ask the engine's batcher (keep_alive_batch.h).
  void ArmExtendTimer();
  void ArmMarginTimer();

  // Nothing more is due: the batcher drops what it still has queued for us.
  void StopTimers();

  // An extension by its own ExtendOp (a reader; the unbatched mode).
  void ExtendAlone();

  // This lock's round of a batch was decided (the batcher's feed).
  void OnBatchRound(RoundResult result);

  void OnExtended(const absl::Status& status);

  // The batcher reached the margin entry queued for `margin_at_` or earlier.
  void OnMarginDue(MonotonicTime now);

  void OnMarginTimer();

  // The lock can no longer be trusted: say so once, stop extending. The
  // lock is not released here, and the operation stays registered with the
  // engine: the handle's owner stops it, and that releases whatever the
  // masters still hold.
  // A lock its owner released (ReleaseAsync() while kept alive) is not lost:
  // the keep-alive just stops, without on_lost.
  void Lost(absl::Status reason);

  // The engine is going away (Cancel): nothing can be released any more.
  void Fail(absl::Status status) override;

  // The margin as whole nanoseconds, rounded up (KeepAliveDurations).
  static int64_t CeilNanoseconds(absl::Duration d);
  absl::Duration ttl() const {
    return absl::Nanoseconds(durations_->ns.ttl_ns);
  }
  absl::Duration extend_every() const {
    return absl::Nanoseconds(durations_->ns.extend_every_ns);
  }
  absl::Duration margin() const {
    return absl::Nanoseconds(durations_->ns.margin_ns);
  }
  // How much earlier than due an extension may go, to join a batch: a tenth
  // of the period.
  std::chrono::nanoseconds ExtendWindow() const {
    return std::chrono::nanoseconds(durations_->ns.extend_every_ns / 10);
  }
  absl::Duration max_hold() const;

  // First: the flags and the heap index fill the word the base's last flag
  // starts. KeepAliveOp is 112 bytes (it was 176 with them after four
  // durations of its own, a hole before on_lost_, and the base's round
  // pointer, which only a NamedOperation has now).
  // The batcher holds an entry for us: an extension (due at extend_due_), a
  // margin check (at margin_at_).
  bool extend_queued_ : 1;
  bool margin_queued_ : 1;
  bool lost_ : 1;     // No more extensions; on_lost_ was posted.
  bool stopped_ : 1;  // Stop() ran, or the engine cancelled us.
  // Its place in the batcher's heap, -1 if none (KeepAliveBatcher::Entry).
  int heap_index_ = -1;
  // Here, before on_lost_: an AnyInvocable is aligned to 16 bytes.
  const CountedRef<KeepAliveDurations> durations_;
  absl::AnyInvocable<void(const absl::Status&)> on_lost_;
  std::shared_ptr<LockState> state_;
  // When the lock falls below its safety margin (valid_until - margin):
  // what a queued margin check is for. Its heap entry may be earlier (an
  // extension moved it later since; the entry is moved when reached),
  // never later.
  MonotonicTime margin_at_;
  MonotonicTime extend_due_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_KEEP_ALIVE_OP_H_
