// Copyright 2026 The redlock Authors.
//
// LoopRunner: a libevent loop driven by the test's own thread, for tests of
// the async engine. RunUntil() turns the loop until a condition holds or a
// bounded time has passed.

#ifndef REDLOCK_TESTS_SUPPORT_LOOP_RUNNER_H_
#define REDLOCK_TESTS_SUPPORT_LOOP_RUNNER_H_

#include <event2/event.h>
#include <signal.h>

#include <chrono>
#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace redlock::testing {

class LoopRunner {
 public:
  LoopRunner()
      : base_(event_base_new()),
        tick_(event_new(
            base_, -1, EV_PERSIST, [](int, short, void*) {}, nullptr)) {
    // AsyncRedlock's contract: programs that run it on their own loop ignore
    // SIGPIPE (hiredis writes with write(2); a reset master would raise it).
    signal(SIGPIPE, SIG_IGN);
    // A steady tick, so that each turn of the loop returns promptly.
    timeval tv = {0, 2000};
    event_add(tick_, &tv);
  }
  ~LoopRunner() {
    event_free(tick_);
    event_base_free(base_);
  }
  LoopRunner(const LoopRunner&) = delete;
  LoopRunner& operator=(const LoopRunner&) = delete;

  event_base* base() const { return base_; }

  // Turns the loop until `done()` or `timeout`; returns done().
  bool RunUntil(const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(10)) {
    const auto deadline =
        std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      event_base_loop(base_, EVLOOP_ONCE);
    }
    return true;
  }

  // Turns the loop for `d`, whatever happens.
  void RunFor(absl::Duration d) {
    RunUntil([] { return false; }, d);
  }

 private:
  event_base* const base_;
  event* const tick_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_LOOP_RUNNER_H_
