// Copyright 2026 The redlock Authors.

#include "src/transport/deferred.h"

#include <utility>

namespace redlock::internal {

Deferred::Deferred(Runtime* runtime)
    : timer_(runtime->NewTimer([this] { RunAll(); })) {}

Deferred::~Deferred() = default;

void Deferred::Post(absl::AnyInvocable<void()> fn) {
  queue_.push_back(std::move(fn));
  if (!timer_->armed()) timer_->Arm(absl::ZeroDuration());
}

void Deferred::RunAll() {
  while (!queue_.empty()) {
    std::vector<absl::AnyInvocable<void()>> batch;
    batch.swap(queue_);
    for (auto& fn : batch) fn();
  }
}

}  // namespace redlock::internal
