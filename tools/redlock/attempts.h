// Copyright 2026 The redlock Authors.
//
// The tool's wait for a lock: one acquisition attempt at a time, with the
// library's jittered retry delay between attempts, until one succeeds, the
// wait budget (--wait) is spent or a terminating signal arrives.
//
// The tool does not pass --wait to the library: a blocking Acquire() or
// WithLock() cannot be interrupted from another thread, and Ctrl-C during a
// long --wait must end the wait at once. Between attempts this loop waits on
// the signalfd instead.

#ifndef REDLOCK_TOOLS_REDLOCK_ATTEMPTS_H_
#define REDLOCK_TOOLS_REDLOCK_ATTEMPTS_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/progress.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

struct AttemptResult {
  absl::Status status;
  // Whether another attempt may follow: the lock was not taken (held
  // elsewhere, or the quorum came too late) and nothing ran under it.
  bool retryable = false;
};

struct AttemptsResult {
  // The last attempt's status; meaningless when `signal` is set.
  absl::Status status;
  int attempts = 0;
  // A terminating signal that ended the wait between attempts; 0 if none.
  int signal = 0;
};

// Calls `attempt` until it is not retryable or `config.wait` is spent, and
// starts `progress` after the first failed attempt; stops it before
// returning. An attempt that succeeds should stop it itself before it
// writes anything or starts a child.
AttemptsResult RetryAttempts(const Config& config, SignalWatch& signals,
                             ProgressDisplay& progress,
                             absl::FunctionRef<AttemptResult()> attempt);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_ATTEMPTS_H_
