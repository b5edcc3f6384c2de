// Copyright 2026 The redlock Authors.
//
// `redlock elect NAME`: leader election through the library
// (Redlock::Campaign(), Resign(), Leader(), Observe(); election.h), in three
// modes:
//
//   elect NAME -- COMMAND   campaign, run COMMAND while leading (child.h, as
//                           `run` does), resign when it exits;
//   elect NAME              campaign, print the leadership, lead until a
//                           signal, resign;
//   elect NAME --listen     print the leader and every new one until a
//                           signal;
//   elect NAME --leader     print the leader once.
//
// Lines are "name=N epoch=E revision=R value=V" (V C-escaped, last), or one
// JSON object each with --json; docs/cli.md has the exit codes.

#ifndef REDLOCK_TOOLS_REDLOCK_ELECT_H_
#define REDLOCK_TOOLS_REDLOCK_ELECT_H_

#include <string>

#include "redlock/election.h"
#include "redlock/redlock.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

// Runs `redlock elect` as `config` says and returns the tool's exit code.
// `path` is config.command's, found by CheckCommand() (empty without a
// command). `signals` is null for --leader only.
int ElectCommand(const Config& config, const std::string& path, Redlock& client,
                 SignalWatch* signals);

// The one line (with its newline) that shows `leader`: key=value pairs, or
// a JSON object with config.json.
std::string LeaderLine(const Config& config, const LeaderInfo& leader);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_ELECT_H_
