// Copyright 2026 The redlock Authors.
//
// The simulated side of the engine's runtime seam (src/transport/runtime.h): a
// single-threaded discrete-event loop in simulated true time, and one
// SimRuntime per simulated client, which gives that client's engine its
// monotonic clock, timers, randomness and connections (to a SimCluster).
//
//   SimLoop loop;
//   SimCluster cluster(&loop, SimCluster::Config{}, /*seed=*/7);
//   SimRuntime client(&loop, &cluster, /*seed=*/7);
//   std::unique_ptr<internal::Timer> t = client.NewTimer([] { ... });
//   t->Arm(absl::Milliseconds(10));
//   client.SetClockRate(1.01);        // this client's clock runs 1% fast
//   loop.RunUntil(loop.now() + absl::Seconds(1));
//
// Everything is deterministic: events run in (time, scheduling order), and
// every random draw comes from a seeded generator, so a seed replays a run
// exactly. Time has nanosecond resolution; nothing here reads a real clock.
//
// Not thread-safe: one thread drives the loop and everything on it.

#ifndef REDLOCK_TESTS_SIM_SIM_LOOP_H_
#define REDLOCK_TESTS_SIM_SIM_LOOP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "src/transport/runtime.h"

namespace redlock::sim {

class SimCluster;

// Names one scheduled event, to cancel it. Default-constructed: no event.
struct SimEventId {
  uint32_t slot = 0;
  uint32_t generation = 0;  // 0: none; a live event's is never 0.
};

class SimLoop {
 public:
  // Where simulated true time starts unless told otherwise.
  static absl::Time DefaultEpoch() {
    return absl::UnixEpoch() + absl::Seconds(1000);
  }

  explicit SimLoop(absl::Time epoch = DefaultEpoch());
  SimLoop(const SimLoop&) = delete;
  SimLoop& operator=(const SimLoop&) = delete;
  // Destroys the callbacks still pending without running them. Everything
  // that schedules on the loop (SimRuntime timers, SimCluster) must be
  // destroyed first.
  ~SimLoop();

  // Simulated true time: the time of the event running, or of the last one
  // run, or what RunUntil() advanced to. Never goes backwards.
  absl::Time now() const { return epoch_ + absl::Nanoseconds(now_ns_); }
  absl::Time epoch() const { return epoch_; }

  // Runs `fn` at `when`, rounded up to the nanosecond; a time before now()
  // counts as now(). Events at the same time run in the order they were
  // scheduled, so an event scheduled for now() runs after everything already
  // due. Never runs `fn` inside At(). May be called from inside an event.
  SimEventId At(absl::Time when, absl::AnyInvocable<void()> fn);
  SimEventId After(absl::Duration delay, absl::AnyInvocable<void()> fn) {
    return At(now() + delay, std::move(fn));
  }
  // Drops a pending event without running it (its callback is destroyed at
  // once). False, and nothing happens, if `id` already ran, was cancelled or
  // names nothing. O(1): the heap entry stays as a tombstone.
  bool Cancel(SimEventId id);

  // Runs the next pending event, advancing now() to its time. False if none
  // was pending.
  bool RunNext();
  // Runs every event due at or before `t`, then advances now() to `t` (if it
  // is later).
  void RunUntil(absl::Time t);
  // Runs events until none is pending or `max_events` have run. True if
  // none is pending.
  bool RunUntilIdle(int64_t max_events = 10'000'000);

  // Events scheduled and neither run nor cancelled.
  int64_t pending() const { return pending_; }
  // Events run since construction.
  int64_t events_run() const { return events_run_; }
  // The time of the next pending event, or absl::InfiniteFuture().
  absl::Time next_event_time();

 private:
  struct HeapEntry {
    int64_t when_ns;  // From epoch_.
    uint64_t seq;
    uint32_t slot;
  };
  struct Slot {
    absl::AnyInvocable<void()> fn;
    uint32_t generation = 1;
    bool pending = false;  // Scheduled, not run, not cancelled.
  };

  // A min-heap on (when_ns, seq).
  static bool Before(const HeapEntry& a, const HeapEntry& b) {
    return a.when_ns < b.when_ns || (a.when_ns == b.when_ns && a.seq < b.seq);
  }
  void HeapPush(HeapEntry entry);
  HeapEntry HeapPop();
  // Pops cancelled entries off the top of the heap.
  void DropCancelledTop();
  void FreeSlot(uint32_t slot);

  const absl::Time epoch_;
  int64_t now_ns_ = 0;
  uint64_t next_seq_ = 0;
  int64_t pending_ = 0;
  int64_t events_run_ = 0;
  std::vector<HeapEntry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
};

// One simulated client's runtime: its engine's clock, timers, randomness and
// connections. Several share one SimLoop and one SimCluster, which must
// outlive it; it must outlive the timers it makes.
//
// The client's monotonic clock advances `clock_rate` client nanoseconds per
// true nanosecond (1.0 at first), continuously: SetClockRate() changes the
// slope, never the reading. A timer armed for d fires when the client's
// clock has advanced by d, i.e. after d / rate true time, never sooner by the
// client's clock (armed timers follow a later rate change).
class SimRuntime : public internal::Runtime {
 public:
  // `seed` and the client's number in `cluster` seed its generator, so two
  // clients given the same seed still draw differently.
  SimRuntime(SimLoop* loop, SimCluster* cluster, uint64_t seed);
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;
  ~SimRuntime() override;

  // A fixed offset under every reading, so MonotonicTime() (zero) is never
  // a moment of the simulation.
  static constexpr int64_t kMonotonicBaseNs =
      int64_t{1'000'000} * 1'000'000'000;

  // internal::Runtime. Now() reads this client's clock.
  MonotonicTime Now() override;
  // This runtime itself: Lock::remaining() reads the simulated client's
  // clock, so the runtime must outlive every Lock its engine hands out.
  internal::Clock* LockClock() override { return this; }
  std::unique_ptr<internal::Timer> NewTimer(
      absl::AnyInvocable<void()> fn) override;
  // Always returns a connection; failures are reported to `observer` (see
  // SimCluster::Connect()).
  absl::StatusOr<std::unique_ptr<internal::Connection>> Connect(
      const MasterAddress& address, internal::ConnectionObserver* observer,
      internal::ConnectionMode mode) override;
  uint64_t RandomBits() override;
  // Posts run as loop events scheduled for now(); the simulation is
  // single-threaded, so "another thread" is just another event.
  absl::StatusOr<std::shared_ptr<internal::Mailbox>> GetMailbox() override;
  // 128 bits from the seeded generator as 32 lowercase hex digits, never one
  // that any client of the same cluster got before.
  absl::StatusOr<std::string> NewToken() override;

  // Fault: from now on the client's clock advances `rate` (> 0) per true
  // second. Armed timers are rescheduled to their deadline on this clock.
  void SetClockRate(double rate);
  double clock_rate() const { return rate_; }
  // Fault: from now on this client's connects to master `master` (an index
  // of the cluster) are refused, as behind a partition between this client
  // and that master only; other clients still reach it. Connections already
  // made are not affected (a test that wants them gone makes a new client).
  void SetUnreachable(int master, bool unreachable);

  // The client's clock at true time `t` (>= the last rate change), in
  // nanoseconds without kMonotonicBaseNs.
  int64_t ClientNanosAt(absl::Time t) const;
  // This client's number in its cluster (0, 1, ...).
  int client_id() const { return client_id_; }
  SimLoop* loop() const { return loop_; }

 private:
  class SimTimer;
  friend class SimTimer;

  // The first true time at which the client's clock reads at least
  // `deadline_ns`; now() if it already does.
  absl::Time TrueTimeOf(int64_t deadline_ns) const;

  SimLoop* const loop_;
  SimCluster* const cluster_;
  const int client_id_;
  std::vector<int> unreachable_;  // Masters this client cannot connect to.
  std::mt19937_64 rng_;  // Deterministic on purpose: a simulation replays.
  // Client clock = anchor_client_ns_ + (true ns - anchor_true_ns_) * rate_.
  int64_t anchor_true_ns_ = 0;  // From the loop's epoch.
  int64_t anchor_client_ns_ = 0;
  double rate_ = 1.0;
  uint64_t next_timer_id_ = 0;
  // Armed timers by creation order, to reschedule on a rate change in an
  // order that does not depend on addresses.
  std::map<uint64_t, SimTimer*> armed_;
  std::shared_ptr<internal::Mailbox> mailbox_;
  // False once the runtime is gone: posts still on the loop then do nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace redlock::sim

#endif  // REDLOCK_TESTS_SIM_SIM_LOOP_H_
