// Copyright 2026 The redlock Authors.

#include "src/engine/operation_host.h"

#include <utility>

#include "src/algorithm/scripts.h"

namespace redlock::internal {

OperationHost::OperationHost(std::unique_ptr<Runtime> runtime, Options options,
                             std::shared_ptr<const RuleOverrides> overrides)
    : overrides_(std::move(overrides)),
      runtime_(std::move(runtime)),
      options_(std::move(options)),
      bitgen_(runtime_.get()),
      completions_(runtime_.get()),
      observer_(options_.observer.get()) {}

OperationHost::~OperationHost() = default;

RoundConfig OperationHost::BaseRound(absl::Duration ttl) const {
  RoundConfig config;
  config.quorum = quorum_;
  config.check_validity = true;
  // Validity is computed from the TTL the masters were given.
  config.ttl = SentTtl(ttl);
  config.drift_factor = options_.drift_factor;
  config.min_validity = options_.min_validity;
  guard_->JudgeVotes(config);
  return config;
}

void OperationHost::SendToAll(const Command& command) {
  for (MasterLink* master : links_) {
    master->Send(command, [](absl::StatusOr<RedisReply>) {});
  }
}

void OperationHost::CleanUpEverywhere(const Command& command,
                                      absl::Duration ttl) {
  for (MasterLink* master : links_) master->SendCleanup(command, ttl);
}

}  // namespace redlock::internal
