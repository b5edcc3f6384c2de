// Copyright 2026 The redlock Authors.
//
// A runner is one way of taking and releasing a lock, one cycle at a time:
// floor_runner.h, raw_fanout_runner.h, async_runner.h, blocking_runner.h.
// Also the warm-up every runner gets, a timed block of cycles, and turning
// an event_base until a condition holds.

#ifndef REDLOCK_BENCH_E2E_RUNNER_H_
#define REDLOCK_BENCH_E2E_RUNNER_H_

#include <event2/event.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"

namespace redlock::bench {

struct CycleSample {
  double acquire_us = 0;
  double cycle_us = 0;
};

// One way of taking and releasing a lock, one cycle at a time.
class Runner {
 public:
  virtual ~Runner() = default;
  // One acquire + release, timed.
  virtual absl::Status Cycle(CycleSample* sample) = 0;
  // Lets background work (connecting) progress for `d`.
  virtual void Idle(absl::Duration d) { absl::SleepFor(d); }
  // Whose CPU time a block is charged to: the calling thread when the whole
  // client runs on it, the process when the client has threads of its own.
  virtual int cpu_scope() const { return RUSAGE_THREAD; }
};

// The TTL as the PX argument: whole milliseconds, at least 1.
std::string TtlMillis(absl::Duration ttl);

// Runs cycles until `cycles` succeeded (connections up, scripts loaded,
// caches warm), within `budget`.
absl::Status WarmUp(Runner& runner, int cycles, absl::Duration budget);

// The samples of a configuration, over all of its blocks.
struct Samples {
  std::vector<double> acquire_us;
  std::vector<double> cycle_us;
  Cpu cpu;
  int64_t cpu_cycles = 0;
  double wall_s = 0;
  int errors = 0;
  std::string last_error;
};

struct BlockResult {
  int ok = 0;
  Cpu cpu;
  double wall_s = 0;
  double p50_us = 0;
};

// Runs `cycles` cycles, adds them to `out`, and returns the block's figures.
BlockResult RunBlock(Runner& runner, int cycles, Samples& out);

// Turns `base` until `done()` or `timeout`.
template <typename Done>
bool RunUntil(event_base* base, Done done, absl::Duration timeout) {
  const SteadyTime deadline = Now() + absl::ToChronoNanoseconds(timeout);
  while (!done()) {
    if (Now() >= deadline) return false;
    event_base_loop(base, EVLOOP_ONCE);
  }
  return true;
}

// Turns `base` for `d`.
void RunFor(event_base* base, absl::Duration d);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_RUNNER_H_
