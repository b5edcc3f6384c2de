// Copyright 2026 The redlock Authors.

#ifndef REDLOCK_BENCH_E2E_RAW_FANOUT_RUNNER_H_
#define REDLOCK_BENCH_E2E_RAW_FANOUT_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/sync_client.h"

namespace redlock::bench {

// The cheapest correct N-master cycle a hand-written client could do with
// hiredis: SET to all N written before any reply is read, poll(), acquire
// done at a quorum of OKs; EVALSHA to all, release done when every master
// answered. No timers, no retries, no per-master bookkeeping: what the
// machine itself costs for an N-master cycle.
class RawFanoutRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<RawFanoutRunner>> Create(
      const std::vector<Master>& masters, int n, absl::Duration ttl);

  absl::Status Cycle(CycleSample* sample) override;

 private:
  RawFanoutRunner(std::vector<ContextPtr> cs, std::string ttl_ms,
                  std::string key);

  absl::Status FlushAll();

  // Reads replies until `done()`. Replies on one connection come in order,
  // so a SET reply still owed when the EVALSHA is sent is read (and checked)
  // first; `on_reply` gets the replies of the current phase only.
  template <typename OnReply, typename Done>
  absl::Status Pump(OnReply on_reply, Done done);

  std::vector<ContextPtr> cs_;
  const std::string ttl_ms_;
  const std::string key_;
  std::vector<int> set_pending_;
  std::vector<int> del_pending_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_RAW_FANOUT_RUNNER_H_
