// Copyright 2026 The redlock Authors.
//
// One timed block of contender processes: the handoff, contended_kinds and
// contention_peer phases' shared steps. The contenders (our
// redlock-e2e-handoff-contender, or a peer speaking its protocol,
// handoff_protocol.h) are started, told the masters, awaited until each is
// ready, sent the block's start and end, and awaited for their reports;
// the masters' counters are read right before the start and after the
// reports.

#ifndef REDLOCK_BENCH_E2E_CONTENDER_BLOCK_H_
#define REDLOCK_BENCH_E2E_CONTENDER_BLOCK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/master_counters.h"
#include "bench/e2e/sync_client.h"

namespace redlock::bench {

struct ContenderBlockSpec {
  std::string binary;
  std::vector<std::vector<std::string>> args;  // One element per contender.
  std::vector<std::string> masters;            // URIs.
  absl::Duration go_delay;  // From sending the go line to the start.
  absl::Duration block;     // From the start to the end.
  absl::Duration report_grace;  // After the end, for the last reports.
};

struct ContenderBlock {
  SteadyTime start;
  SteadyTime end;
  std::vector<std::string> reports;  // Each contender's "done" report.
  // The masters' counters over the block, without the reads of `info`.
  MasterCounters masters;
};

// Runs one block; `info` is one connection per master for the counters.
absl::StatusOr<ContenderBlock> RunContenderBlock(
    const ContenderBlockSpec& spec, std::vector<ContextPtr>& info);

// The sum of ReadMasterCounters() over `info`.
absl::StatusOr<MasterCounters> ReadAllMasterCounters(
    std::vector<ContextPtr>& info);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_CONTENDER_BLOCK_H_
