// Copyright 2026 The redlock Authors.

#include "src/transport/event_loop.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <pthread.h>
#include <signal.h>

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

}  // namespace

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
      thread_([this] {
        // The library's connections write with send(MSG_NOSIGNAL) and
        // raise no SIGPIPE (WireConnectionTest). Blocked here as well, so
        // that nothing else run on this thread (an observer, a callback
        // writing to a closed pipe) can end the process that way.
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
        // Whatever was posted before the stop still runs, exactly once.
        RunPosted();
      }) {}

EventLoop::~EventLoop() {
  Post([this] { event_base_loopbreak(base_); });
  thread_.join();
  event_free(wakeup_);
  event_base_free(base_);
}

bool EventLoop::InLoopThread() const {
  return std::this_thread::get_id() == thread_.get_id();
}

void EventLoop::Post(absl::AnyInvocable<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_.push_back(std::move(fn));
  }
  event_active(wakeup_, EV_TIMEOUT, 0);
}

void EventLoop::RunAndWait(absl::AnyInvocable<void()> fn) {
  Waiter done;
  Post([&] {
    fn();
    done.Notify();
  });
  done.Wait();
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
