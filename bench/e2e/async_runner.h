// Copyright 2026 The redlock Authors.

#ifndef REDLOCK_BENCH_E2E_ASYNC_RUNNER_H_
#define REDLOCK_BENCH_E2E_ASYNC_RUNNER_H_

#include <event2/event.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/e2e/runner.h"
#include "redlock/async_redlock.h"
#include "redlock/options.h"

namespace redlock::bench {

// AsyncRedlock on an event_base that this (the bench) thread turns: the
// whole client runs on the calling thread, like the floor.
class AsyncRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<AsyncRunner>> Create(
      redlock::Options options, std::string resource, absl::Duration ttl);

  ~AsyncRunner() override;

  absl::Status Cycle(CycleSample* sample) override;

  void Idle(absl::Duration d) override { RunFor(base_, d); }

  event_base* base() const { return base_; }
  AsyncRedlock& client() { return *client_; }

 private:
  AsyncRunner(event_base* base, std::unique_ptr<AsyncRedlock> client,
              std::string resource, absl::Duration ttl);

  event_base* const base_;
  std::unique_ptr<AsyncRedlock> client_;
  const std::string resource_;
  const absl::Duration ttl_;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_ASYNC_RUNNER_H_
