// Copyright 2026 The redlock Authors.

#ifndef REDLOCK_BENCH_E2E_BLOCKING_RUNNER_H_
#define REDLOCK_BENCH_E2E_BLOCKING_RUNNER_H_

#include <sys/resource.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/e2e/runner.h"
#include "redlock/options.h"
#include "redlock/redlock.h"

namespace redlock::bench {

// The blocking Redlock. A caller turns the client's loop itself when nobody
// else does (src/transport/event_loop.h). With `callers_turn` false the
// client works as before that: every call is posted to the loop thread and
// the caller waits, two thread hand-overs per call.
class BlockingRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<BlockingRunner>> Create(
      redlock::Options options, std::string resource, absl::Duration ttl,
      bool callers_turn = true);

  absl::Status Cycle(CycleSample* sample) override;

  int cpu_scope() const override { return RUSAGE_SELF; }

 private:
  BlockingRunner(std::unique_ptr<Redlock> client, std::string resource,
                 absl::Duration ttl);

  std::unique_ptr<Redlock> client_;
  const std::string resource_;
  const absl::Duration ttl_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_BLOCKING_RUNNER_H_
