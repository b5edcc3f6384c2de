// Copyright 2026 The redlock Authors.

#include "src/transport/event_loop.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/status/status.h"

namespace redlock::internal {
namespace {

// libevent needs its locking callbacks before any base that other threads
// wake is created.
bool EnableLibeventThreads() {
  static const bool ok = evthread_use_pthreads() == 0;
  return ok;
}

// The loop this thread is turning right now, if any.
thread_local const EventLoop* current_turn = nullptr;

std::atomic<bool> callers_turn_default{true};

// Marks this thread as turning `loop` for the scope (nested turns of
// another client's loop, from inside a callback, restore the outer one).
class TurnScope {
 public:
  explicit TurnScope(const EventLoop* loop) : outer_(current_turn) {
    current_turn = loop;
  }
  ~TurnScope() { current_turn = outer_; }
  TurnScope(const TurnScope&) = delete;
  TurnScope& operator=(const TurnScope&) = delete;

 private:
  const EventLoop* const outer_;
};

// One turn: blocks until something is active (a reply, a timer, a post),
// runs it, returns. Never returns at once for want of events.
void TurnOnce(event_base* base) {
  event_base_loop(base, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY);
}

}  // namespace

void EventLoop::Completion::Finish() {
  if (posted_) {
    // A thread other than the caller turns: the caller sleeps on waiter_.
    {
      std::lock_guard<std::mutex> lock(loop_->mu_);
      --loop_->outstanding_;
      loop_->served_ = true;
    }
    finished_.store(true, std::memory_order_release);
    waiter_.Notify();  // The caller may return, and free *this, from here.
    return;
  }
  // The caller turns the loop itself and reads this after its turn.
  finished_.store(true, std::memory_order_release);
}

void EventLoop::SetCallersTurnForTesting(bool callers_turn) {
  callers_turn_default.store(callers_turn);
}

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Start() {
  if (!EnableLibeventThreads()) {
    return absl::InternalError("libevent has no pthreads support");
  }
  event_base* base = event_base_new();
  if (base == nullptr) return absl::InternalError("event_base_new failed");
  std::unique_ptr<EventLoop> loop(new EventLoop(base));
  return loop;
}

EventLoop::EventLoop(event_base* base)
    : base_(base),
      wakeup_(event_new(base, -1, 0, &EventLoop::OnWakeup, this)),
      callers_turn_(callers_turn_default.load()),
      thread_([this] { BackgroundMain(); }) {}

EventLoop::~EventLoop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  background_cv_.notify_all();
  // Ends the background thread's turn if it is inside one.
  event_active(wakeup_, EV_TIMEOUT, 0);
  thread_.join();
  event_free(wakeup_);
  event_base_free(base_);
}

bool EventLoop::InLoopThread() const { return current_turn == this; }

void EventLoop::Post(absl::AnyInvocable<void()> fn) {
  bool nobody_turns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_.push_back(std::move(fn));
    nobody_turns = turner_ == Turner::kNobody;
  }
  // Wakes the turner; with nobody turning, stays active for the next turn.
  event_active(wakeup_, EV_TIMEOUT, 0);
  if (nobody_turns) background_cv_.notify_one();
}

void EventLoop::Run(absl::AnyInvocable<void()> start, Completion& done,
                    bool catch_up) {
  done.loop_ = this;
  std::unique_lock<std::mutex> lock(mu_);
  if (callers_turn_ && turner_ == Turner::kNobody && !stop_) {
    // Nobody turns: this thread does, until its work is finished.
    turner_ = Turner::kCaller;
    turn_started_at_ = std::chrono::steady_clock::now();
    lock.unlock();
    {
      TurnScope turn(this);
      // Catch up first on what arrived while nobody turned (a reply, a
      // closed connection, a timer due), as a loop thread would have, so
      // that the work starts from the state the masters left.
      if (catch_up) event_base_loop(base_, EVLOOP_NONBLOCK);
      RunPosted();  // What other threads posted earlier goes first.
      start();
      while (!done.finished_.load(std::memory_order_acquire)) TurnOnce(base_);
    }
    lock.lock();
    ReleaseLeaseLocked();
    return;
  }
  // Someone else turns: post the work to it and sleep until it finishes.
  done.posted_ = true;
  ++outstanding_;
  posted_.push_back(std::move(start));
  lock.unlock();
  event_active(wakeup_, EV_TIMEOUT, 0);
  done.waiter_.Wait();
}

void EventLoop::RunAndWait(absl::AnyInvocable<void()> fn) {
  Completion done;
  Run(
      [&] {
        fn();
        done.Finish();
      },
      done);
}

void EventLoop::Pin() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++pinned_;
  }
  background_cv_.notify_one();
}

void EventLoop::Unpin() {
  std::lock_guard<std::mutex> lock(mu_);
  --pinned_;
}

bool EventLoop::UrgentLocked() const {
  return pinned_ > 0 || outstanding_ > 0 || !posted_.empty();
}

void EventLoop::ReleaseLeaseLocked() {
  turner_ = Turner::kNobody;
  released_at_ = std::chrono::steady_clock::now();
  // Otherwise a background thread in its grace finds the lease free when
  // the grace ends (a caller that came back before took it; the grace starts
  // again); one that found the lease taken sleeps until told.
  if (UrgentLocked() || stop_ || background_waits_for_lease_) {
    background_cv_.notify_one();
  }
}

void EventLoop::BackgroundMain() {
  // The library's connections write with send(MSG_NOSIGNAL) and raise no
  // SIGPIPE (WireConnectionTest). Blocked here as well, so that nothing else
  // run on this thread (an observer, a callback writing to a closed pipe)
  // can end the process that way.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);

  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Wait for the lease: free, and either needed now or free for a grace.
    for (;;) {
      if (turner_ != Turner::kNobody) {
        // A caller's short turns (a sequence of calls) are polled for, every
        // grace, so that giving the lease back costs the caller nothing; a
        // long turn (a wait for a held lock) is slept through, and its
        // caller wakes this thread when it gives the lease back.
        const auto now = std::chrono::steady_clock::now();
        if (turner_ == Turner::kCaller && now - turn_started_at_ < kLongTurn) {
          background_cv_.wait_until(lock, now + kGrace);
          continue;
        }
        background_waits_for_lease_ = true;
        background_cv_.wait(lock);
        background_waits_for_lease_ = false;
        continue;
      }
      if (stop_ || UrgentLocked()) break;
      const auto due = released_at_ + kGrace;
      if (std::chrono::steady_clock::now() >= due) break;
      background_cv_.wait_until(lock, due);
    }
    turner_ = Turner::kBackground;
    served_ = false;
    {
      TurnScope turn(this);
      while (!stop_) {
        lock.unlock();
        TurnOnce(base_);
        lock.lock();
        // A caller this thread answered may be back soon: give the lease
        // back once nothing else waits for a turn.
        if (callers_turn_ && served_ && !UrgentLocked()) break;
      }
      if (stop_) {
        lock.unlock();
        // Whatever was posted before the stop still runs, exactly once.
        RunPosted();
        return;
      }
    }
    turner_ = Turner::kNobody;
    released_at_ = std::chrono::steady_clock::now();
  }
}

void EventLoop::OnWakeup(int, short, void* arg) {
  static_cast<EventLoop*>(arg)->RunPosted();
}

void EventLoop::RunPosted() {
  for (;;) {
    std::vector<absl::AnyInvocable<void()>> batch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (posted_.empty()) return;
      batch.swap(posted_);
    }
    for (auto& fn : batch) fn();
  }
}

}  // namespace redlock::internal
