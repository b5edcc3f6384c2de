// Copyright 2026 The redlock Authors.
//
// Runs closures on a later turn of the loop (a Runtime timer armed for now).
// This is how callbacks are kept off the caller's stack: a result known at once
// is still delivered after the call that produced it returned. Loop thread
// only.

#ifndef REDLOCK_SRC_TRANSPORT_DEFERRED_H_
#define REDLOCK_SRC_TRANSPORT_DEFERRED_H_

#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

class Deferred {
 public:
  explicit Deferred(Runtime* runtime);
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
  std::unique_ptr<Timer> timer_;
  std::vector<absl::AnyInvocable<void()>> queue_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_DEFERRED_H_
