// Copyright 2026 The redlock Authors.
//
// The state every copy of a Lock handle shares. Written on the engine's loop
// thread, read from any thread.

#ifndef REDLOCK_SRC_LOCK_STATE_H_
#define REDLOCK_SRC_LOCK_STATE_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "redlock/lock.h"

namespace redlock::internal {

struct LockState {
  // Immutable after construction.
  const void* owner = nullptr;  // The engine that acquired it.
  std::string resource;
  std::string key;
  std::string token;
  MonotonicTime acquired_at;

  mutable absl::Mutex mu;
  MonotonicTime valid_until ABSL_GUARDED_BY(mu);
  bool released ABSL_GUARDED_BY(mu) = false;
  std::vector<MasterVote> votes ABSL_GUARDED_BY(mu);
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_LOCK_STATE_H_
