// Copyright 2026 The redlock Authors.
//
// A libevent loop on a thread of its own, with thread-safe posting. The
// blocking client runs its engine here.

#ifndef REDLOCK_SRC_TRANSPORT_EVENT_LOOP_H_
#define REDLOCK_SRC_TRANSPORT_EVENT_LOOP_H_

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
  // Creates the loop and starts its thread. kInternal if libevent cannot.
  static absl::StatusOr<std::unique_ptr<EventLoop>> Start();

  // Runs what is still posted, stops the thread and frees the loop. Must not
  // be called on the loop thread.
  ~EventLoop();

  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  event_base* base() const { return base_; }
  bool InLoopThread() const;

  // Runs `fn` on the loop thread, soon, in posting order. Thread-safe.
  void Post(absl::AnyInvocable<void()> fn);

  // Runs `fn` on the loop thread and waits for it. Not on the loop thread.
  void RunAndWait(absl::AnyInvocable<void()> fn);

 private:
  explicit EventLoop(event_base* base);
  static void OnWakeup(int fd, short what, void* arg);
  void RunPosted();

  event_base* const base_;
  event* const wakeup_;
  std::mutex mu_;
  std::vector<absl::AnyInvocable<void()>> posted_;  // Guarded by mu_.
  std::thread thread_;  // Last: it starts running in the constructor.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_EVENT_LOOP_H_
