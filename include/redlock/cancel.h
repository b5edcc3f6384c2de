// Copyright 2026 The redlock Authors.
//
// Cancellation: lets a caller stop waiting for an acquisition without
// destroying the client. Pass one in AcquireOptions::cancel, keep a copy, and
// call Cancel() from any thread:
//
//   redlock::Cancellation cancel;
//   redlock::AcquireOptions options;
//   options.ttl = absl::Seconds(30);
//   options.wait = absl::Minutes(10);
//   options.cancel = cancel;
//   std::thread waiter([&] { auto lock = client->Acquire("nightly", options);
//   });
//   ...
//   cancel.Cancel();  // `waiter`'s Acquire() returns kCancelled soon.
//
// Copies share one state: cancelling any copy cancels them all, and every
// call that was given one. A Cancellation cannot be reset; make a new one for
// the next call. Every method is thread-safe.

#ifndef REDLOCK_CANCEL_H_
#define REDLOCK_CANCEL_H_

#include <memory>

namespace redlock {

namespace internal {
struct CancelState;
}  // namespace internal

class Cancellation {
 public:
  // A new signal, not cancelled.
  Cancellation();
  // Copies share the state (a move copies too: no copy is ever left empty).
  Cancellation(const Cancellation&) = default;
  Cancellation& operator=(const Cancellation&) = default;

  // Cancels every call this was passed to that has not completed yet: each
  // stops retrying, releases whatever its attempt in flight won, and
  // completes with kCancelled on its loop thread soon after (a call whose
  // result was already decided completes with that result). Calls started
  // with it later complete with kCancelled at once. Idempotent; never
  // blocks on the network.
  void Cancel();

  // True once Cancel() was called on any copy.
  bool cancelled() const;

  // The shared state; for the client implementation.
  const std::shared_ptr<internal::CancelState>& state() const { return state_; }

 private:
  std::shared_ptr<internal::CancelState> state_;
};

}  // namespace redlock

#endif  // REDLOCK_CANCEL_H_
