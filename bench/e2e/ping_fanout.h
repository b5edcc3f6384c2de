// Copyright 2026 The redlock Authors.
//
// PingFanout: the raw floor of a round trip to N masters. One blocking
// hiredis connection per master; a round trip writes PING to every one
// before reading any reply, then poll()s until every master has answered.
// Nothing a lock client could do on the same masters takes less than one of
// these per round of its protocol.

#ifndef REDLOCK_BENCH_E2E_PING_FANOUT_H_
#define REDLOCK_BENCH_E2E_PING_FANOUT_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/sync_client.h"

namespace redlock::bench {

class PingFanout {
 public:
  // Connects to the first `n` of `masters`. kUnavailable if one does not
  // answer.
  static absl::StatusOr<std::unique_ptr<PingFanout>> Create(
      const std::vector<Master>& masters, int n);

  // One fan-out, in microseconds: PING written to every master → every
  // +PONG read. kDeadlineExceeded if a master has not answered in 2 s;
  // kInternal on any other reply (the connections are then unusable).
  absl::StatusOr<double> RoundTripUs();

 private:
  explicit PingFanout(std::vector<ContextPtr> cs) : cs_(std::move(cs)) {}

  std::vector<ContextPtr> cs_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_PING_FANOUT_H_
