// Copyright 2026 The redlock Authors.
//
// `redlock reconfigure`: changes the deployment's member set (the record
// every deployment marker carries, src/algorithm/membership.h) from the list in
// --masters to the list in --to, one step per run, by talking to the
// servers directly (src/admin/connection.h):
//
//   begin   steady(O) epoch e      -> joint(O->N) epoch e+1
//   finish  joint(O->N) epoch e+1  -> steady(N) epoch e+2, once every grant
//           made under epoch e has expired (max_ttl*1.01 + 2s + 1s on each
//           server's clock since it got e+1), after raising every fencing
//           counter on the new members to the highest any server holds
//   abort   joint(O->N) epoch e+1  -> steady(O) epoch e+2, at once
//
// Every write is a compare-and-set on the record the server held when it
// was read (ReconfigureCommand, src/algorithm/scripts.h), so two runs at once
// cannot both change one server, and re-running a step skips the servers it
// already changed. The protocol is src/admin/reconfigure.h's, which the
// simulation's operator runs too; this is its front end: the lists, the
// connections, the sleep through the wait (--wait) and the exit codes.
// docs/cli.md describes the output and exit codes.

#ifndef REDLOCK_TOOLS_REDLOCK_RECONFIGURE_H_
#define REDLOCK_TOOLS_REDLOCK_RECONFIGURE_H_

#include "tools/redlock/cli.h"

namespace redlock::cli {

// Reads every server of --masters and --to, judges the deployment's record,
// prints the step and one line per server, and carries it out (not with
// --dry-run). Returns kExitOk (done, or nothing to do), kExitConflict (the
// wait is not over), kExitRefused (the records do not allow the change, or
// changed while it ran), kExitUnavailable (too few servers answered).
int ReconfigureCommand(const Config& config);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_RECONFIGURE_H_
