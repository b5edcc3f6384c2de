// Copyright 2026 The redlock Authors.

#include "bench/e2e/runner.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "bench/e2e/stats.h"

namespace redlock::bench {

std::string TtlMillis(absl::Duration ttl) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)));
}

absl::Status WarmUp(Runner& runner, int cycles, absl::Duration budget) {
  const SteadyTime deadline = Now() + absl::ToChronoNanoseconds(budget);
  absl::Status last;
  int ok = 0;
  while (ok < cycles) {
    if (Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("warm-up: ", ok, " of ", cycles,
                       " cycles succeeded; last error: ", last.ToString()));
    }
    CycleSample sample;
    last = runner.Cycle(&sample);
    if (last.ok()) {
      ++ok;
    } else {
      runner.Idle(absl::Milliseconds(10));
    }
  }
  return absl::OkStatus();
}

BlockResult RunBlock(Runner& runner, int cycles, Samples& out) {
  BlockResult block;
  std::vector<double> cycle_us;
  cycle_us.reserve(cycles);
  const int who = runner.cpu_scope();
  const Cpu cpu0 = CpuNow(who);
  const SteadyTime w0 = Now();
  for (int i = 0; i < cycles; ++i) {
    CycleSample sample;
    absl::Status s = runner.Cycle(&sample);
    if (!s.ok()) {
      ++out.errors;
      out.last_error = s.ToString();
      continue;
    }
    ++block.ok;
    out.acquire_us.push_back(sample.acquire_us);
    cycle_us.push_back(sample.cycle_us);
  }
  block.wall_s = SecondsBetween(w0, Now());
  block.cpu = CpuNow(who) - cpu0;
  block.p50_us = Median(cycle_us);
  out.cycle_us.insert(out.cycle_us.end(), cycle_us.begin(), cycle_us.end());
  out.cpu += block.cpu;
  out.cpu_cycles += block.ok;
  out.wall_s += block.wall_s;
  return block;
}

void RunFor(event_base* base, absl::Duration d) {
  timeval tv = absl::ToTimeval(d);
  event_base_loopexit(base, &tv);
  event_base_dispatch(base);
}

}  // namespace redlock::bench
