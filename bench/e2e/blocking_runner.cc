// Copyright 2026 The redlock Authors.

#include "bench/e2e/blocking_runner.h"

#include <utility>

#include "redlock/lock.h"
#include "src/transport/event_loop.h"

namespace redlock::bench {

absl::StatusOr<std::unique_ptr<BlockingRunner>> BlockingRunner::Create(
    redlock::Options options, std::string resource, absl::Duration ttl,
    bool callers_turn) {
  internal::EventLoop::SetCallersTurnForTesting(callers_turn);
  absl::StatusOr<std::unique_ptr<Redlock>> client =
      Redlock::Create(std::move(options));
  internal::EventLoop::SetCallersTurnForTesting(true);
  if (!client.ok()) return client.status();
  return std::unique_ptr<BlockingRunner>(
      new BlockingRunner(*std::move(client), std::move(resource), ttl));
}

BlockingRunner::BlockingRunner(std::unique_ptr<Redlock> client,
                               std::string resource, absl::Duration ttl)
    : client_(std::move(client)), resource_(std::move(resource)), ttl_(ttl) {}

absl::Status BlockingRunner::Cycle(CycleSample* sample) {
  const SteadyTime t0 = Now();
  absl::StatusOr<Lock> lock =
      client_->Acquire(resource_, ttl_, absl::ZeroDuration());
  if (!lock.ok()) return lock.status();
  const SteadyTime t1 = Now();
  absl::StatusOr<ReleaseReport> report = client_->Release(*lock);
  if (!report.ok()) return report.status();
  const SteadyTime t2 = Now();
  sample->acquire_us = MicrosBetween(t0, t1);
  sample->cycle_us = MicrosBetween(t0, t2);
  return absl::OkStatus();
}

}  // namespace redlock::bench
