// Copyright 2026 The redlock Authors.

#include "bench/e2e/async_runner.h"

#include <optional>
#include <utility>

#include "redlock/lock.h"

namespace redlock::bench {

absl::StatusOr<std::unique_ptr<AsyncRunner>> AsyncRunner::Create(
    redlock::Options options, std::string resource, absl::Duration ttl) {
  event_base* base = event_base_new();
  if (base == nullptr) return absl::InternalError("event_base_new failed");
  if (absl::Status s = ResolveMasterHosts(options); !s.ok()) {
    event_base_free(base);
    return s;
  }
  absl::StatusOr<std::unique_ptr<AsyncRedlock>> client =
      AsyncRedlock::Create(base, std::move(options));
  if (!client.ok()) {
    event_base_free(base);
    return client.status();
  }
  return std::unique_ptr<AsyncRunner>(
      new AsyncRunner(base, *std::move(client), std::move(resource), ttl));
}

AsyncRunner::AsyncRunner(event_base* base, std::unique_ptr<AsyncRedlock> client,
                         std::string resource, absl::Duration ttl)
    : base_(base),
      client_(std::move(client)),
      resource_(std::move(resource)),
      ttl_(ttl) {}

AsyncRunner::~AsyncRunner() {
  client_.reset();
  event_base_free(base_);
}

absl::Status AsyncRunner::Cycle(CycleSample* sample) {
  const SteadyTime t0 = Now();
  std::optional<absl::StatusOr<Lock>> lock;
  absl::Status s = client_->AcquireAsync(
      resource_, ttl_, absl::ZeroDuration(),
      [&lock](absl::StatusOr<Lock> l) { lock.emplace(std::move(l)); });
  if (!s.ok()) return s;
  if (!RunUntil(
          base_, [&] { return lock.has_value(); }, absl::Seconds(5))) {
    return absl::DeadlineExceededError("async acquire: no callback in 5s");
  }
  if (!lock->ok()) return lock->status();
  const SteadyTime t1 = Now();
  std::optional<absl::StatusOr<ReleaseReport>> report;
  s = client_->ReleaseAsync(**lock, [&report](absl::StatusOr<ReleaseReport> r) {
    report.emplace(std::move(r));
  });
  if (!s.ok()) return s;
  if (!RunUntil(
          base_, [&] { return report.has_value(); }, absl::Seconds(5))) {
    return absl::DeadlineExceededError("async release: no callback in 5s");
  }
  if (!report->ok()) return report->status();
  const SteadyTime t2 = Now();
  sample->acquire_us = MicrosBetween(t0, t1);
  sample->cycle_us = MicrosBetween(t0, t2);
  return absl::OkStatus();
}

}  // namespace redlock::bench
