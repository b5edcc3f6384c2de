// Copyright 2026 The redlock Authors.

#include "src/deferred.h"

#include <event2/event.h>

#include <utility>

namespace redlock::internal {

Deferred::Deferred(event_base* base)
    : event_(event_new(base, -1, 0, &Deferred::OnEvent, this)) {}

Deferred::~Deferred() { event_free(event_); }

void Deferred::Post(absl::AnyInvocable<void()> fn) {
  queue_.push_back(std::move(fn));
  if (!event_pending(event_, EV_TIMEOUT | EV_READ | EV_WRITE, nullptr)) {
    event_active(event_, EV_TIMEOUT, 0);
  }
}

void Deferred::RunAll() {
  while (!queue_.empty()) {
    std::vector<absl::AnyInvocable<void()>> batch;
    batch.swap(queue_);
    for (auto& fn : batch) fn();
  }
}

void Deferred::OnEvent(int /*fd*/, short /*what*/, void* arg) {
  static_cast<Deferred*>(arg)->RunAll();
}

}  // namespace redlock::internal
