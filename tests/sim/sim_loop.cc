// Copyright 2026 The redlock Authors.

#include "tests/sim/sim_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "tests/sim/sim_cluster.h"

namespace redlock::sim {

// ---------------------------------------------------------------------------
// SimLoop

SimLoop::SimLoop(absl::Time epoch) : epoch_(epoch) {
  heap_.reserve(1024);
  slots_.reserve(1024);
}

SimLoop::~SimLoop() = default;

SimEventId SimLoop::At(absl::Time when, absl::AnyInvocable<void()> fn) {
  // Rounded up so that an event never runs before the time asked for.
  int64_t when_ns = now_ns_;
  if (when > now()) {
    const absl::Duration from_epoch =
        absl::Ceil(when - epoch_, absl::Nanoseconds(1));
    when_ns = from_epoch == absl::InfiniteDuration()
                  ? std::numeric_limits<int64_t>::max()
                  : absl::ToInt64Nanoseconds(from_epoch);
  }
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Slot& s = slots_[slot];
  s.fn = std::move(fn);
  s.pending = true;
  ++pending_;
  HeapPush(HeapEntry{when_ns, next_seq_++, slot});
  return SimEventId{slot, s.generation};
}

bool SimLoop::Cancel(SimEventId id) {
  if (id.generation == 0 || id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (s.generation != id.generation || !s.pending) return false;
  s.pending = false;
  --pending_;
  // Destroyed now, so what it captured is released now; the heap entry
  // frees the slot when it reaches the top.
  absl::AnyInvocable<void()> dropped = std::move(s.fn);
  s.fn = nullptr;
  return true;
}

void SimLoop::FreeSlot(uint32_t slot) {
  Slot& s = slots_[slot];
  // Wraps after 2^32 reuses of one slot; 0 is kept for "no event".
  if (++s.generation == 0) s.generation = 1;
  free_slots_.push_back(slot);
}

void SimLoop::HeapPush(HeapEntry entry) {
  size_t i = heap_.size();
  heap_.push_back(entry);
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!Before(entry, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = entry;
}

SimLoop::HeapEntry SimLoop::HeapPop() {
  const HeapEntry top = heap_.front();
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n > 0) {
    size_t i = 0;
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
      if (!Before(heap_[child], last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }
  return top;
}

void SimLoop::DropCancelledTop() {
  while (!heap_.empty() && !slots_[heap_.front().slot].pending) {
    FreeSlot(HeapPop().slot);
  }
}

absl::Time SimLoop::next_event_time() {
  DropCancelledTop();
  if (heap_.empty()) return absl::InfiniteFuture();
  return epoch_ + absl::Nanoseconds(heap_.front().when_ns);
}

bool SimLoop::RunNext() {
  DropCancelledTop();
  if (heap_.empty()) return false;
  const HeapEntry entry = HeapPop();
  Slot& s = slots_[entry.slot];
  // Moved out before running: the callback may schedule (and so grow
  // slots_) or try to cancel itself, which must then be a no-op.
  absl::AnyInvocable<void()> fn = std::move(s.fn);
  s.fn = nullptr;
  s.pending = false;
  --pending_;
  FreeSlot(entry.slot);
  now_ns_ = entry.when_ns;
  ++events_run_;
  fn();
  return true;
}

void SimLoop::RunUntil(absl::Time t) {
  while (next_event_time() <= t) RunNext();
  if (t > now()) {
    now_ns_ =
        absl::ToInt64Nanoseconds(absl::Floor(t - epoch_, absl::Nanoseconds(1)));
  }
}

bool SimLoop::RunUntilIdle(int64_t max_events) {
  for (int64_t i = 0; i < max_events; ++i) {
    if (!RunNext()) return true;
  }
  return pending_ == 0;
}

// ---------------------------------------------------------------------------
// SimRuntime

class SimRuntime::SimTimer : public internal::Timer {
 public:
  SimTimer(SimRuntime* runtime, uint64_t id, absl::AnyInvocable<void()> fn)
      : runtime_(runtime), id_(id), fn_(std::move(fn)) {}
  ~SimTimer() override { Cancel(); }

  void Arm(absl::Duration after) override {
    Cancel();
    const int64_t now_ns = runtime_->ClientNanosAt(runtime_->loop_->now());
    if (after <= absl::ZeroDuration()) {
      // A later turn, after everything already due: At(now) does that.
      // Not tracked for rate changes: it is due whatever the rate.
      deadline_ns_ = now_ns;
      Schedule(runtime_->loop_->now());
      return;
    }
    const absl::Duration rounded = absl::Ceil(after, absl::Nanoseconds(1));
    const int64_t after_ns = rounded >= absl::Hours(24 * 365 * 100)
                                 ? int64_t{1} << 61  // Effectively never.
                                 : absl::ToInt64Nanoseconds(rounded);
    deadline_ns_ = now_ns + after_ns;
    runtime_->armed_.emplace(id_, this);
    Schedule(runtime_->TrueTimeOf(deadline_ns_));
  }

  void Cancel() override {
    if (!armed()) return;
    runtime_->loop_->Cancel(event_);
    event_ = SimEventId{};
    runtime_->armed_.erase(id_);
  }

  bool armed() const override { return event_.generation != 0; }

  // After a clock-rate change: the same deadline on the client's clock.
  void Reschedule() {
    runtime_->loop_->Cancel(event_);
    Schedule(runtime_->TrueTimeOf(deadline_ns_));
  }
  absl::Time fire_at() const { return fire_at_; }
  uint64_t arm_seq() const { return arm_seq_; }

 private:
  void Schedule(absl::Time when) {
    fire_at_ = when;
    arm_seq_ = runtime_->next_timer_id_++;
    // `this` is safe: destroying the timer cancels the event.
    event_ = runtime_->loop_->At(when, [this] { Fire(); });
  }

  void Fire() {
    event_ = SimEventId{};
    runtime_->armed_.erase(id_);
    // Last touch of `this`: the callback may destroy or re-arm the timer.
    fn_();
  }

  SimRuntime* const runtime_;
  const uint64_t id_;
  absl::AnyInvocable<void()> fn_;
  SimEventId event_;
  int64_t deadline_ns_ = 0;  // On the client's clock.
  absl::Time fire_at_;
  uint64_t arm_seq_ = 0;
};

namespace {

// Distinct streams for distinct (seed, client) pairs.
std::mt19937_64 SeededGenerator(uint64_t seed, int client_id) {
  std::seed_seq seq{static_cast<uint32_t>(seed),
                    static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(client_id), 0x5eed0c1eu};
  return std::mt19937_64(seq);
}

}  // namespace

SimRuntime::SimRuntime(SimLoop* loop, SimCluster* cluster, uint64_t seed)
    : loop_(loop),
      cluster_(cluster),
      client_id_(cluster->RegisterClient()),
      rng_(SeededGenerator(seed, client_id_)) {
  anchor_true_ns_ = absl::ToInt64Nanoseconds(loop_->now() - loop_->epoch());
  anchor_client_ns_ = anchor_true_ns_;
}

SimRuntime::~SimRuntime() { *alive_ = false; }

namespace {

class SimMailbox final : public internal::Mailbox {
 public:
  SimMailbox(SimLoop* loop, std::shared_ptr<bool> alive)
      : loop_(loop), alive_(std::move(alive)) {}
  void Post(absl::AnyInvocable<void()> fn) override {
    if (!*alive_) return;
    loop_->After(absl::ZeroDuration(),
                 [alive = alive_, fn = std::move(fn)]() mutable {
                   if (*alive) fn();
                 });
  }

 private:
  SimLoop* const loop_;
  const std::shared_ptr<bool> alive_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<internal::Mailbox>> SimRuntime::GetMailbox() {
  if (mailbox_ == nullptr)
    mailbox_ = std::make_shared<SimMailbox>(loop_, alive_);
  return mailbox_;
}

int64_t SimRuntime::ClientNanosAt(absl::Time t) const {
  const int64_t true_ns = absl::ToInt64Nanoseconds(t - loop_->epoch());
  const int64_t elapsed = true_ns - anchor_true_ns_;
  if (rate_ == 1.0) return anchor_client_ns_ + elapsed;
  return anchor_client_ns_ +
         static_cast<int64_t>(std::floor(static_cast<double>(elapsed) * rate_));
}

absl::Time SimRuntime::TrueTimeOf(int64_t deadline_ns) const {
  const absl::Time now = loop_->now();
  if (ClientNanosAt(now) >= deadline_ns) return now;
  const int64_t needed = deadline_ns - anchor_client_ns_;
  int64_t elapsed = rate_ == 1.0 ? needed
                                 : static_cast<int64_t>(std::ceil(
                                       static_cast<double>(needed) / rate_));
  // Floating-point rounding either way: settle on the first nanosecond at
  // which the client's clock has reached the deadline.
  const absl::Time anchor = loop_->epoch() + absl::Nanoseconds(anchor_true_ns_);
  while (ClientNanosAt(anchor + absl::Nanoseconds(elapsed)) < deadline_ns) {
    ++elapsed;
  }
  while (elapsed > 0 &&
         ClientNanosAt(anchor + absl::Nanoseconds(elapsed - 1)) >=
             deadline_ns) {
    --elapsed;
  }
  return std::max(now, anchor + absl::Nanoseconds(elapsed));
}

MonotonicTime SimRuntime::Now() {
  return MonotonicTime(
      std::chrono::nanoseconds(kMonotonicBaseNs + ClientNanosAt(loop_->now())));
}

std::unique_ptr<internal::Timer> SimRuntime::NewTimer(
    absl::AnyInvocable<void()> fn) {
  return std::make_unique<SimTimer>(this, next_timer_id_++, std::move(fn));
}

absl::StatusOr<std::unique_ptr<internal::Connection>> SimRuntime::Connect(
    const MasterAddress& address, internal::ConnectionObserver* observer,
    internal::ConnectionMode mode) {
  const int master = cluster_->MasterIndex(address);
  if (master >= 0 && std::find(unreachable_.begin(), unreachable_.end(),
                               master) != unreachable_.end()) {
    // An address no master listens on: refused after one delay, as a
    // connect the partition blocks.
    MasterAddress nowhere = address;
    nowhere.port = 0;
    return cluster_->Connect(nowhere, observer, mode);
  }
  return cluster_->Connect(address, observer, mode);
}

void SimRuntime::SetUnreachable(int master, bool unreachable) {
  auto it = std::find(unreachable_.begin(), unreachable_.end(), master);
  if (unreachable && it == unreachable_.end()) unreachable_.push_back(master);
  if (!unreachable && it != unreachable_.end()) unreachable_.erase(it);
}

uint64_t SimRuntime::RandomBits() { return rng_(); }

absl::StatusOr<std::string> SimRuntime::NewToken() {
  while (true) {
    const uint64_t hi = rng_();
    const uint64_t lo = rng_();
    std::string token = absl::StrFormat("%016x%016x", hi, lo);
    if (cluster_->ClaimToken(token, client_id_)) return token;
  }
}

void SimRuntime::SetClockRate(double rate) {
  // A monotonic clock that stops or runs backwards is not a fault we model.
  if (!(rate > 0) || !std::isfinite(rate)) std::abort();
  const absl::Time now = loop_->now();
  anchor_client_ns_ = ClientNanosAt(now);
  anchor_true_ns_ = absl::ToInt64Nanoseconds(now - loop_->epoch());
  rate_ = rate;
  // Rescheduled in their current firing order, so timers due together keep
  // their relative order.
  std::vector<SimTimer*> timers;
  timers.reserve(armed_.size());
  for (const auto& [id, timer] : armed_) timers.push_back(timer);
  std::sort(timers.begin(), timers.end(), [](SimTimer* a, SimTimer* b) {
    return std::make_tuple(a->fire_at(), a->arm_seq()) <
           std::make_tuple(b->fire_at(), b->arm_seq());
  });
  for (SimTimer* timer : timers) timer->Reschedule();
}

}  // namespace redlock::sim
