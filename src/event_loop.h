// Copyright 2026 The redlock Authors.
//
// A libevent loop on a thread of its own, with thread-safe posting. The
// blocking client runs its engine here.

#ifndef REDLOCK_SRC_EVENT_LOOP_H_
#define REDLOCK_SRC_EVENT_LOOP_H_

#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

struct event;
struct event_base;

namespace redlock::internal {

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
  absl::Mutex mu_;
  std::vector<absl::AnyInvocable<void()>> posted_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // Last: it starts running in the constructor.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_EVENT_LOOP_H_
