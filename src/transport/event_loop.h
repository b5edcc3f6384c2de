// Copyright 2026 The redlock Authors.
//
// A libevent loop that the blocking client runs its engine on, with
// thread-safe posting.
//
// The loop is turned by one thread at a time, the holder of its lease:
//   - a caller waiting in Run() takes the lease when nobody holds it and turns
//     the loop itself until its work is finished. Its request, the replies and
//     its result are handled on its own thread: no hand-over between threads,
//     which is what a blocking call used to wait for twice;
//   - the loop's own thread (the background thread) takes the lease when
//     nobody has held it for a short grace period, or at once when something
//     is waiting for a turn (work posted by a thread that does not turn,
//     a caller that found the lease taken, a pinned background: Pin()), and
//     turns the loop until a caller it served is answered and nothing else
//     waits for a turn.
// While nobody turns, timers and sockets wait; with the background pinned
// (a lock kept alive while the caller works), nobody-turns lasts only for a
// hand-over.

#ifndef REDLOCK_SRC_TRANSPORT_EVENT_LOOP_H_
#define REDLOCK_SRC_TRANSPORT_EVENT_LOOP_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"

struct event;
struct event_base;

namespace redlock::internal {

// A one-shot event between threads. Built on std::mutex and
// std::condition_variable rather than absl::Notification so that
// ThreadSanitizer sees the synchronisation (Debian's Abseil is not built for
// it).
class Waiter {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

class EventLoop {
 public:
  // How long the lease stays free after a caller gave it back before the
  // background thread takes it: long enough to cover a caller's next call
  // of a sequence, short enough that a timer is never late by more.
  static constexpr std::chrono::microseconds kGrace{1000};
  // A caller's turn longer than this is slept through by the background
  // thread, which is then woken when the lease is given back; shorter ones
  // are polled for every grace.
  static constexpr std::chrono::microseconds kLongTurn{4000};

  // The end of one Run(): finished on the loop, by whoever turns it.
  class Completion {
   public:
    Completion() = default;
    Completion(const Completion&) = delete;
    Completion& operator=(const Completion&) = delete;

    // Marks the work finished and wakes its caller. On the loop, exactly
    // once.
    void Finish();

   private:
    friend class EventLoop;
    EventLoop* loop_ = nullptr;
    bool posted_ = false;  // Set before the work is posted; then read-only.
    std::atomic<bool> finished_{false};
    Waiter waiter_;
  };

  // Creates the loop and starts its thread. kInternal if libevent cannot.
  static absl::StatusOr<std::unique_ptr<EventLoop>> Start();

  // Benchmark hook: with false, loops started afterwards work as before
  // callers turned them: every Run() is posted to the background thread,
  // which never gives the lease back. Default true.
  static void SetCallersTurnForTesting(bool callers_turn);

  // Runs what is still posted, stops the thread and frees the loop. Must not
  // be called while a thread waits in Run() or RunAndWait(), nor on the loop.
  ~EventLoop();

  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  event_base* base() const { return base_; }

  // True on the thread turning the loop right now (inside a callback of the
  // loop), whichever thread that is.
  bool InLoopThread() const;

  // Runs `fn` on the loop, soon, in posting order. Thread-safe.
  void Post(absl::AnyInvocable<void()> fn);

  // Runs `start` on the loop and returns once `done.Finish()` was called on
  // the loop (by `start` itself or by what it set going). The calling thread
  // turns the loop itself if nobody else does: first, with `catch_up`, one
  // non-blocking turn for what arrived while nobody turned (work that reads
  // the engine's state and finishes at once needs it; work that turns the
  // loop until answered meets it in its first turn). Not on the loop.
  void Run(absl::AnyInvocable<void()> start, Completion& done,
           bool catch_up = true);

  // Runs `fn` on the loop and waits for it. Not on the loop.
  void RunAndWait(absl::AnyInvocable<void()> fn);

  // While pinned (a count), the background thread takes the lease as soon
  // as it is free: for work that must not wait for a caller's next call,
  // such as a lock kept alive while its holder works.
  void Pin();
  void Unpin();

 private:
  enum class Turner { kNobody, kBackground, kCaller };

  explicit EventLoop(event_base* base);
  static void OnWakeup(int fd, short what, void* arg);
  void RunPosted();
  void BackgroundMain();
  // Gives the lease back after a caller's turn. mu_ held.
  void ReleaseLeaseLocked();
  // Whether the background thread must turn now. mu_ held.
  bool UrgentLocked() const;

  event_base* const base_;
  event* const wakeup_;
  const bool callers_turn_;
  std::mutex mu_;
  std::condition_variable background_cv_;
  std::vector<absl::AnyInvocable<void()>> posted_;  // Guarded by mu_.
  Turner turner_ = Turner::kNobody;                 // Guarded by mu_.
  int outstanding_ = 0;  // Posted Run()s not finished. Guarded by mu_.
  int pinned_ = 0;       // Guarded by mu_.
  bool served_ = false;  // The background finished a posted Run(). mu_.
  bool stop_ = false;    // Guarded by mu_.
  // The background thread sleeps until the lease is given back. mu_.
  bool background_waits_for_lease_ = false;
  std::chrono::steady_clock::time_point released_at_;  // Guarded by mu_.
  // When the caller holding the lease took it. Guarded by mu_.
  std::chrono::steady_clock::time_point turn_started_at_;
  std::thread thread_;  // Last: it starts running in the constructor.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_EVENT_LOOP_H_
