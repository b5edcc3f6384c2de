// Copyright 2026 The redlock Authors.

#include "redlock/election.h"

#include <mutex>
#include <utility>

#include "src/engine/election_ops.h"

namespace redlock {
namespace {

const internal::LeadershipState& EmptyLeadership() {
  static const auto* const state =
      new internal::LeadershipState(std::string(), Lock(), std::string());
  return *state;
}

}  // namespace

Leadership::Leadership() = default;

Leadership::Leadership(std::shared_ptr<internal::LeadershipState> state)
    : state_(std::move(state)) {}

const std::string& Leadership::name() const {
  return (state_ != nullptr ? *state_ : EmptyLeadership()).name;
}

std::string Leadership::value() const {
  if (state_ == nullptr) return std::string();
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->value;
}

uint64_t Leadership::epoch() const {
  return state_ != nullptr ? state_->lock.fence() : 0;
}

uint64_t Leadership::revision() const {
  if (state_ == nullptr) return 0;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->revision;
}

const Lock& Leadership::lock() const {
  return (state_ != nullptr ? *state_ : EmptyLeadership()).lock;
}

absl::Duration Leadership::remaining() const {
  return valid() ? lock().remaining() : absl::ZeroDuration();
}

bool Leadership::valid() const {
  return state_ != nullptr && !resigned() && !lock().lost() && lock().valid();
}

bool Leadership::lost() const { return lock().lost(); }

absl::Status Leadership::lost_reason() const { return lock().lost_reason(); }

bool Leadership::resigned() const {
  if (state_ == nullptr) return false;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->resigned;
}

LeaderInfo Leadership::info() const {
  LeaderInfo info;
  info.name = name();
  info.epoch = epoch();
  if (state_ != nullptr) {
    std::lock_guard<std::mutex> lock(state_->mu);
    info.value = state_->value;
    info.revision = state_->revision;
  }
  return info;
}

}  // namespace redlock
