// Copyright 2026 The redlock Authors.
//
// The state every copy of a Cancellation shares. Thread-safe.

#ifndef REDLOCK_SRC_ENGINE_CANCEL_STATE_H_
#define REDLOCK_SRC_ENGINE_CANCEL_STATE_H_

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace redlock::internal {

struct CancelState {
  // Runs `fn` once, on the thread that cancels (at once, on this thread, if
  // that already happened), unless Unsubscribe(id) comes first. `fn` runs
  // under the state's lock: it must be quick and must not touch this state.
  // Returns the id for Unsubscribe().
  uint64_t Subscribe(absl::AnyInvocable<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    const uint64_t id = ++last_id;
    if (cancelled) {
      fn();
    } else {
      subscribers.emplace_back(id, std::move(fn));
    }
    return id;
  }

  // After it returns, the callback of `id` is not running and never will.
  void Unsubscribe(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = subscribers.begin(); it != subscribers.end(); ++it) {
      if (it->first == id) {
        subscribers.erase(it);
        return;
      }
    }
  }

  void Cancel() {
    std::lock_guard<std::mutex> lock(mu);
    if (cancelled) return;
    cancelled = true;
    // Under the lock, so that an Unsubscribe() that returned has no callback
    // of its own still running.
    for (auto& [id, fn] : subscribers) fn();
    subscribers.clear();
  }

  bool IsCancelled() const {
    std::lock_guard<std::mutex> lock(mu);
    return cancelled;
  }

  mutable std::mutex mu;
  bool cancelled = false;  // Guarded by mu.
  uint64_t last_id = 0;    // Guarded by mu.
  std::vector<std::pair<uint64_t, absl::AnyInvocable<void()>>>
      subscribers;  // Guarded by mu.
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_CANCEL_STATE_H_
