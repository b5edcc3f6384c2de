// Copyright 2026 The redlock Authors.

#include "redlock/async_redlock.h"

#include <utility>

#include "src/engine/election_ops.h"
#include "src/engine/engine.h"

namespace redlock {

absl::StatusOr<std::unique_ptr<AsyncRedlock>> AsyncRedlock::Create(
    event_base* base, Options options) {
  absl::StatusOr<std::unique_ptr<internal::Engine>> engine =
      internal::Engine::Create(base, std::move(options));
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<AsyncRedlock>(new AsyncRedlock(*std::move(engine)));
}

AsyncRedlock::AsyncRedlock(std::unique_ptr<internal::Engine> engine)
    : engine_(std::move(engine)) {}

AsyncRedlock::~AsyncRedlock() = default;

absl::Status AsyncRedlock::AcquireAsync(absl::string_view resource,
                                        absl::Duration ttl, absl::Duration wait,
                                        AcquireCallback done) {
  AcquireOptions options;
  options.ttl = ttl;
  options.wait = wait;
  return engine_->Acquire(resource, options, std::move(done));
}

absl::Status AsyncRedlock::AcquireAsync(absl::string_view resource,
                                        const AcquireOptions& options,
                                        AcquireCallback done) {
  if (options.ttl == absl::ZeroDuration()) {
    AcquireOptions with_default = options;
    with_default.ttl = engine_->options().default_ttl;
    return engine_->Acquire(resource, with_default, std::move(done));
  }
  return engine_->Acquire(resource, options, std::move(done));
}

absl::Status AsyncRedlock::AcquireAsync(absl::Span<const std::string> resources,
                                        const AcquireOptions& options,
                                        AcquireCallback done) {
  AcquireOptions resolved = options;
  if (resolved.ttl == absl::ZeroDuration()) {
    resolved.ttl = engine_->options().default_ttl;
  }
  return engine_->Acquire(resources, resolved, std::move(done));
}

absl::Status AsyncRedlock::AcquirePermitsAsync(absl::string_view name,
                                               const SemaphoreOptions& sem,
                                               const AcquireOptions& options,
                                               AcquireCallback done) {
  AcquireOptions resolved = options;
  if (resolved.ttl == absl::ZeroDuration()) {
    resolved.ttl = engine_->options().default_ttl;
  }
  return engine_->AcquirePermits(name, sem, resolved, std::move(done));
}

absl::StatusOr<Lock> AsyncRedlock::Adopt(absl::string_view resource,
                                         absl::string_view token,
                                         uint64_t fence) {
  AdoptOptions options;
  options.fence = fence;
  return engine_->Adopt(resource, token, options);
}

absl::StatusOr<Lock> AsyncRedlock::Adopt(absl::string_view resource,
                                         absl::string_view token,
                                         const AdoptOptions& options) {
  return engine_->Adopt(resource, token, options);
}

absl::StatusOr<KeepAliveHandle> AsyncRedlock::KeepAlive(const Lock& lock,
                                                        absl::Duration ttl,
                                                        HoldOptions options) {
  absl::StatusOr<std::shared_ptr<internal::KeepAliveOp>> op =
      engine_->KeepAlive(lock, ttl, std::move(options));
  if (!op.ok()) return op.status();
  return KeepAliveHandle(*op);
}

KeepAliveHandle& KeepAliveHandle::operator=(KeepAliveHandle&& other) noexcept {
  if (this != &other) {
    Stop();
    op_ = std::move(other.op_);
    other.op_.reset();
  }
  return *this;
}

KeepAliveHandle::~KeepAliveHandle() { Stop(); }

void KeepAliveHandle::Stop(bool release) {
  std::shared_ptr<internal::KeepAliveOp> op = op_.lock();
  op_.reset();
  if (op) internal::StopKeepAlive(*op, release);
}

absl::Status AsyncRedlock::ExtendAsync(const Lock& lock, absl::Duration ttl,
                                       ExtendCallback done) {
  return engine_->Extend(lock, ttl, std::move(done));
}

absl::Status AsyncRedlock::ReleaseAsync(const Lock& lock,
                                        ReleaseCallback done) {
  return engine_->Release(lock, ReleaseOptions(), std::move(done));
}

absl::Status AsyncRedlock::ReleaseAsync(const Lock& lock,
                                        const ReleaseOptions& options,
                                        ReleaseCallback done) {
  return engine_->Release(lock, options, std::move(done));
}

const Options& AsyncRedlock::options() const { return engine_->options(); }

std::vector<MasterHealth> AsyncRedlock::Health() const {
  return engine_->Health();
}

absl::Status AsyncRedlock::CampaignAsync(absl::string_view name,
                                         absl::string_view value,
                                         CampaignOptions options,
                                         CampaignCallback done) {
  return engine_->Campaign(name, value, std::move(options), std::move(done));
}

absl::Status AsyncRedlock::ProclaimAsync(const Leadership& leadership,
                                         absl::string_view value,
                                         ExtendCallback done) {
  return engine_->Proclaim(leadership, value, std::move(done));
}

absl::Status AsyncRedlock::ResignAsync(const Leadership& leadership,
                                       ReleaseCallback done) {
  return engine_->Resign(leadership, std::move(done));
}

absl::Status AsyncRedlock::LeaderAsync(absl::string_view name,
                                       LeaderCallback done) {
  return engine_->Leader(name, std::move(done));
}

absl::StatusOr<ObserveHandle> AsyncRedlock::Observe(absl::string_view name,
                                                    ObserveOptions options) {
  absl::StatusOr<std::weak_ptr<internal::ObserveOp>> op =
      engine_->Observe(name, std::move(options));
  if (!op.ok()) return op.status();
  return ObserveHandle([op = *std::move(op)] {
    if (std::shared_ptr<internal::ObserveOp> self = op.lock()) self->Stop();
  });
}

}  // namespace redlock
