// Copyright 2026 The redlock Authors.
//
// What a contender process does before its clock starts, shared by
// redlock-e2e-handoff-contender and redlock-e2e-thread-contenders: reading
// the masters from the phase, and making its client ready (connected to
// every master with each one's grants counting, one lock cycle of its own
// done) so that the contended acquisitions pay for nothing but themselves.

#ifndef REDLOCK_BENCH_E2E_CONTENDER_PROCESS_H_
#define REDLOCK_BENCH_E2E_CONTENDER_PROCESS_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redlock/redlock.h"

namespace redlock::bench {

// The start of a contender process: SIGPIPE ignored (a master that resets a
// connection, or a phase that went away, shows as a failed write instead of
// ending the process), then the first line on stdin read, "masters
// URI,URI,...". Returns the URIs; NotFoundError at end of file (the phase
// gave up: exit 0); InvalidArgumentError "expected \"masters ...\", got
// \"LINE\"" for any other line.
absl::StatusOr<std::vector<std::string>> ReadMasters();

// Until `budget` has passed: calls `cycle` (one acquire and release on a
// resource of the caller's own; OK when both went through) until it once
// returns OK, and then, every 5 ms, checks `client.Health()` until every
// master is connected with its grants_count OK. Returns OK once both hold;
// else, at the deadline, the last failure seen (`cycle`'s status, or which
// master was not ready and why).
absl::Status WarmUpClient(Redlock& client, absl::Duration budget,
                          absl::FunctionRef<absl::Status()> cycle);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_CONTENDER_PROCESS_H_
