// Copyright 2026 The redlock Authors.
//
// An Observer that counts lost acquisition attempts (OnAttempt with an
// outcome other than OK), shareable by several clients, with a hook run once
// after the next attempt.

#ifndef REDLOCK_TESTS_SUPPORT_ATTEMPT_COUNTER_H_
#define REDLOCK_TESTS_SUPPORT_ATTEMPT_COUNTER_H_

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "redlock/observer.h"

namespace redlock::testing {

// Counts attempts that lost, and runs a hook on the loop thread after each.
class AttemptCounter : public Observer {
 public:
  void OnAttempt(const AttemptEvent& event) override {
    attempts_.fetch_add(1);
    if (!event.outcome.ok()) lost_.fetch_add(1);
    absl::AnyInvocable<void(const AttemptEvent&)> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = std::move(hook_);
    }
    if (hook) hook(event);
  }
  void OnAcquired(const AcquiredEvent& event) override {
    if (event.handed_over) handed_over_.fetch_add(1);
  }
  int lost() const { return lost_.load(); }
  // Acquisitions won by a release's hand-off (AcquiredEvent::handed_over).
  int handed_over() const { return handed_over_.load(); }
  // Attempts, won or lost.
  int attempts() const { return attempts_.load(); }
  // Runs once, after the next attempt.
  void AfterNextAttempt(absl::AnyInvocable<void(const AttemptEvent&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    hook_ = std::move(hook);
  }

 private:
  std::atomic<int> lost_{0};
  std::atomic<int> attempts_{0};
  std::atomic<int> handed_over_{0};
  // std::mutex, not absl::Mutex: one counter serves several clients' loop
  // threads, and ThreadSanitizer sees only std::mutex (Debian's Abseil is
  // not built for it).
  std::mutex mu_;
  absl::AnyInvocable<void(const AttemptEvent&)> hook_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_ATTEMPT_COUNTER_H_
