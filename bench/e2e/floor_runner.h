// Copyright 2026 The redlock Authors.

#ifndef REDLOCK_BENCH_E2E_FLOOR_RUNNER_H_
#define REDLOCK_BENCH_E2E_FLOOR_RUNNER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/sync_client.h"
#include "redlock/options.h"

namespace redlock::bench {

// The floor: one blocking hiredis connection to one master, SET NX PX and
// the EVALSHA compare-and-delete, with a fresh getrandom() token per cycle
// as any correct lock client needs. No quorum, no fan-out, no event loop.
class FloorRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<FloorRunner>> Create(
      const MasterAddress& address, absl::Duration ttl);

  absl::Status Cycle(CycleSample* sample) override;

 private:
  FloorRunner(ContextPtr c, std::string ttl_ms);

  ContextPtr c_;
  const std::string key_;
  const std::string ttl_ms_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_FLOOR_RUNNER_H_
