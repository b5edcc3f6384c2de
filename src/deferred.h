// Copyright 2026 The redlock Authors.
//
// Runs closures on a later turn of a libevent loop. This is how callbacks are
// kept off the caller's stack: a result known at once is still delivered
// after the call that produced it returned. Loop thread only.

#ifndef REDLOCK_SRC_DEFERRED_H_
#define REDLOCK_SRC_DEFERRED_H_

#include <vector>

#include "absl/functional/any_invocable.h"

struct event;
struct event_base;

namespace redlock::internal {

class Deferred {
 public:
  explicit Deferred(event_base* base);
  // Closures still queued are dropped without running: owners that promise
  // exactly-once callbacks call RunAll() first.
  ~Deferred();

  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;

  // Queues `fn` to run on a later loop turn, in order of posting.
  void Post(absl::AnyInvocable<void()> fn);

  // Runs everything queued now, including what those closures post.
  void RunAll();

 private:
  static void OnEvent(int fd, short what, void* arg);

  event* event_;
  std::vector<absl::AnyInvocable<void()>> queue_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_DEFERRED_H_
