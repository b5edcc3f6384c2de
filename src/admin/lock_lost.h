// Copyright 2026 The redlock Authors.
//
// What a holder that keeps a lock alive itself may do to the Lock beyond
// the public API: `redlock run` extends its lock from its own thread (a
// blocking client has no KeepAlive) and, when an extension fails, marks the
// lock lost so that Lock::lost() and lost_reason() say so, as the library's
// own keep-alive does.

#ifndef REDLOCK_SRC_ADMIN_LOCK_LOST_H_
#define REDLOCK_SRC_ADMIN_LOCK_LOST_H_

#include "absl/status/status.h"
#include "redlock/lock.h"

namespace redlock::admin {

// Marks `lock` (and every copy of it) lost with `reason`, which must not be
// OK. The first reason wins: returns false, changing nothing, if the lock
// was already lost. Thread-safe.
bool MarkLost(const Lock& lock, absl::Status reason);

}  // namespace redlock::admin

#endif  // REDLOCK_SRC_ADMIN_LOCK_LOST_H_
