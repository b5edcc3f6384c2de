// Copyright 2026 The redlock Authors.
//
// `redlock run`: acquire, run a command as a child while the lock is
// extended in the background, release when it exits.
//
// The child runs in its own process group (and, when the tool is in the
// foreground of a terminal, that group gets the terminal), so the tool can
// signal the whole job: signals sent to the tool (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT) are forwarded to the group; when the lock is lost the group gets
// SIGTERM and, after --grace, SIGKILL. Whatever happens, the tool waits for
// the child before the lock is released.

#ifndef REDLOCK_TOOLS_REDLOCK_RUN_H_
#define REDLOCK_TOOLS_REDLOCK_RUN_H_

#include "redlock/redlock.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

// Notes which file descriptors the tool inherited, so that everything it
// opens later (the library's connections) can be kept from the child. Call
// first thing in main().
void RecordInheritedFds();

// Finds config.command[0] the way a shell would (PATH unless it has a '/').
// Returns 0, or kExitNotFound / kExitCannotExecute after printing why.
int CheckCommand(const Config& config, std::string* path);

// Runs config.command under the lock; returns the tool's exit code.
int RunCommand(const Config& config, const std::string& path, Redlock& client,
               SignalWatch& signals);

// config.limit and config.permits as the library takes them.
SemaphoreOptions SemaphoreOf(const Config& config);

// The exit code for a failed acquisition, after printing why. `what` says
// what is not done, e.g. "not running the command".
int AcquireFailure(const Config& config, const absl::Status& status,
                   absl::string_view what);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_RUN_H_
