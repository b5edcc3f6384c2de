// Copyright 2026 The redlock Authors.
//
// What a master has counted since it started, read with one INFO command:
// commands executed, calls per command, CPU. The difference of two readings
// is what the master did in between, plus the INFO that took the first
// reading (Redis counts a command once it has run, so a reading does not
// include itself); kInfoCommandsPerReading says how much to take off.
//
// Commands run by a script (redis.call) are counted like any other, both in
// total_commands_processed and per command: an EVALSHA whose script runs
// GET, DEL and PUBLISH counts 4.

#ifndef REDLOCK_BENCH_E2E_MASTER_COUNTERS_H_
#define REDLOCK_BENCH_E2E_MASTER_COUNTERS_H_

#include <hiredis/hiredis.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/e2e/common.h"

namespace redlock::bench {

inline constexpr int kInfoCommandsPerReading = 1;

struct MasterCounters {
  int64_t commands = 0;                  // total_commands_processed
  std::map<std::string, int64_t> calls;  // cmdstat_NAME calls, by NAME
  std::map<std::string, int64_t> usec;   // cmdstat_NAME usec, by NAME
  Cpu cpu;                               // used_cpu_user, used_cpu_sys

  MasterCounters& operator+=(const MasterCounters& o);
  MasterCounters operator-(const MasterCounters& o) const;
  // Takes off `readings` INFO commands (the harness's own).
  void RemoveInfo(int64_t readings);
};

// Parses the text of INFO all (or of INFO stats, commandstats and cpu).
MasterCounters ParseMasterCounters(absl::string_view info);

// One INFO all on `c`.
absl::StatusOr<MasterCounters> ReadMasterCounters(redisContext* c);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_MASTER_COUNTERS_H_
