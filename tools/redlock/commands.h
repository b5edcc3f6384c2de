// Copyright 2026 The redlock Authors.
//
// The subcommands for scripts and operators: `acquire`, and `release` and
// `extend` of a token an earlier process acquired (Redlock::Adopt(), then
// Release() or Extend()), all through the library; and `status` (what each
// master holds, asked directly: src/admin/probe.h; with --election, an
// election's lease and records: election_status.h). Each returns the tool's
// exit code; see docs/cli.md for the output formats.

#ifndef REDLOCK_TOOLS_REDLOCK_COMMANDS_H_
#define REDLOCK_TOOLS_REDLOCK_COMMANDS_H_

#include "redlock/redlock.h"
#include "tools/redlock/cli.h"
#include "tools/redlock/signals.h"

namespace redlock::cli {

int AcquireCommand(const Config& config, Redlock& client, SignalWatch& signals);
int ReleaseCommand(const Config& config, Redlock& client);
int ExtendCommand(const Config& config, Redlock& client);
int StatusCommand(const Config& config);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_COMMANDS_H_
