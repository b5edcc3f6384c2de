// Copyright 2026 The redlock Authors.
//
// --callgrind: one configuration for a fixed number of cycles after a
// warm-up, for valgrind --tool=callgrind and strace -c (scripts/bench.sh
// runs it twice and takes the difference).

#ifndef REDLOCK_BENCH_E2E_CALLGRIND_H_
#define REDLOCK_BENCH_E2E_CALLGRIND_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "bench/e2e/masters.h"

namespace redlock::bench {

// `which`: floor, raw, async or blocking; `n` masters (not for floor).
// Returns the exit status: 0, 1 (an error), 2 (a bad `which`).
int RunCallgrind(const std::vector<Master>& masters, const std::string& which,
                 int n, int cycles, absl::Duration ttl);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_CALLGRIND_H_
