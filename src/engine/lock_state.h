// Copyright 2026 The redlock Authors.
//
// The state every copy of a Lock handle shares. Written on the engine's loop
// thread, read from any thread.

#ifndef REDLOCK_SRC_ENGINE_LOCK_STATE_H_
#define REDLOCK_SRC_ENGINE_LOCK_STATE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "redlock/lock.h"
#include "src/algorithm/clock.h"

namespace redlock::internal {

struct LockState {
  // Immutable after construction.
  const void* owner = nullptr;  // The engine that acquired it.
  // Runtime::LockClock() of that engine: what remaining() measures with.
  internal::Clock* clock = nullptr;
  std::string resource;  // resources[0].
  std::string key;       // keys[0].
  // Every resource of the lock, sorted, and their keys in the same order
  // (one, or several for a multi-resource lock).
  std::vector<std::string> resources;
  std::vector<std::string> keys;
  std::string token;
  MonotonicTime acquired_at;
  uint64_t fence = 0;
  bool adopted = false;  // Made by Adopt(), not won by an acquisition.
  // A semaphore's permit set (Engine::AcquirePermits()): its slot numbers,
  // ascending, in the order of `keys`; the semaphore's limit key and limit.
  // Empty and 0 for a lock.
  std::vector<int> slots;
  std::string limit_key;
  int limit = 0;
  // A reader of a read-write lock (AcquireOptions::shared): `key` is the
  // shared lock key, `reader_key` its own key (SharedHolderKey()),
  // `readers_key` the readers' index (SharedHoldersKey()). False and empty
  // for a writer.
  bool shared = false;
  std::string reader_key;
  std::string readers_key;

  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it even
  // though Debian's Abseil is not built for it.
  mutable std::mutex mu;
  MonotonicTime valid_until;      // Guarded by mu.
  bool released = false;          // Guarded by mu.
  std::vector<MasterVote> votes;  // Guarded by mu.
  absl::Status lost;              // Guarded by mu. OK until lost.

  // Marks the lock lost (first reason wins). Returns false if it already was.
  bool MarkLost(absl::Status reason) {
    std::lock_guard<std::mutex> lock(mu);
    if (!lost.ok()) return false;
    lost = std::move(reason);
    return true;
  }
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_LOCK_STATE_H_
