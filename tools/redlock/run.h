// Copyright 2026 The redlock Authors.
//
// `redlock run`: acquire, run a command as a child while the lock is
// extended in the background, release when it exits. The child is started
// and supervised as child.h describes: signals sent to the tool are
// forwarded to its process group; when the lock is lost the group gets
// SIGTERM and, after --grace, SIGKILL; the lock is released only once the
// child has been reaped.

#ifndef REDLOCK_TOOLS_REDLOCK_RUN_H_
#define REDLOCK_TOOLS_REDLOCK_RUN_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "redlock/redlock.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

// Runs config.command under the lock; returns the tool's exit code.
int RunCommand(const Config& config, const std::string& path, Redlock& client,
               SignalWatch& signals);

// config.limit and config.permits as the library takes them.
SemaphoreOptions SemaphoreOf(const Config& config);

// The exit code for a failed acquisition (or, for elect, campaign), after
// printing why. `what` says what is not done, e.g. "not running the
// command". kAborted is config.conflict_exit_code; kUnavailable and
// kDeadlineExceeded kExitUnavailable; kInvalidArgument kExitUsage; a limit
// mismatch (kFailedPrecondition with --limit) kExitRefused; anything else
// kExitSoftware.
int AcquireFailure(const Config& config, const absl::Status& status,
                   absl::string_view what);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_RUN_H_
