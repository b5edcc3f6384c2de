// Copyright 2026 The redlock Authors.

#include "tools/redlock/attempts.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "redlock/lock.h"

namespace redlock::cli {

AttemptsResult RetryAttempts(const Config& config, SignalWatch& signals,
                             ProgressDisplay& progress,
                             absl::FunctionRef<AttemptResult()> attempt) {
  const MonotonicTime start = MonotonicClock::now();
  const int64_t min_us =
      absl::ToInt64Microseconds(config.options.retry.min_delay);
  const int64_t max_us =
      absl::ToInt64Microseconds(config.options.retry.max_delay);
  absl::BitGen random;
  bool waiting = false;
  AttemptsResult result;
  while (true) {
    const AttemptResult last = attempt();
    ++result.attempts;
    result.status = last.status;
    if (!last.retryable) break;
    // The library's policy: a uniformly drawn delay, and no attempt that
    // would start after the budget.
    const absl::Duration delay = absl::Microseconds(
        absl::Uniform<int64_t>(absl::IntervalClosed, random, min_us, max_us));
    const absl::Duration elapsed =
        absl::FromChrono(MonotonicClock::now() - start);
    if (elapsed + delay > config.wait) break;
    if (!waiting) {
      waiting = true;
      PrintDebug(config.verbosity, absl::StrCat("waiting for ", config.resource,
                                                ": ", last.status.message()));
      progress.Start();
    }
    if (const int signo = signals.WaitForTermination(delay); signo != 0) {
      result.signal = signo;
      break;
    }
  }
  progress.Stop();
  return result;
}

}  // namespace redlock::cli
