// Copyright 2026 The redlock Authors.

#include "redlock/lock.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/algorithm/clock.h"
#include "src/engine/lock_state.h"

namespace redlock {
namespace {

const internal::LockState& EmptyState() {
  static const auto* const state = new internal::LockState();
  return *state;
}

}  // namespace

namespace internal {

std::mutex& LockStateMutex(const LockState* state) {
  // A few dozen, so that threads working on different locks seldom meet;
  // never destroyed (a lock may be read while the process exits).
  static constexpr size_t kStripes = 64;
  static std::mutex* const stripes = new std::mutex[kStripes];
  const auto at = reinterpret_cast<uintptr_t>(state);
  return stripes[((at >> 4) ^ (at >> 10)) % kStripes];
}

}  // namespace internal

absl::string_view MasterVoteKindName(MasterVote::Kind kind) {
  switch (kind) {
    case MasterVote::Kind::kGranted:
      return "granted";
    case MasterVote::Kind::kDenied:
      return "denied";
    case MasterVote::Kind::kFailed:
      return "failed";
    case MasterVote::Kind::kPending:
      return "no reply yet";
  }
  return "unknown";
}

std::string DescribeVotes(const std::vector<MasterVote>& votes) {
  return absl::StrJoin(votes, ", ", [](std::string* out, const MasterVote& v) {
    absl::StrAppend(out, v.master, " ", MasterVoteKindName(v.kind));
    if (v.kind == MasterVote::Kind::kFailed) {
      absl::StrAppend(out, " (", absl::StatusCodeToString(v.error.code()), ": ",
                      v.error.message(), ")");
    } else if (v.kind != MasterVote::Kind::kPending) {
      absl::StrAppend(out, " (", internal::ReadableDuration(v.latency), ")");
    }
  });
}

Lock::Lock() = default;

Lock::Lock(std::shared_ptr<internal::LockState> state)
    : state_(std::move(state)) {}

const std::string& Lock::resource() const {
  return state_ ? state_->resource() : EmptyState().resource();
}

const std::string& Lock::key() const {
  return state_ ? state_->key() : EmptyState().key();
}

absl::Span<const std::string> Lock::resources() const {
  return state_ ? state_->resources() : absl::Span<const std::string>();
}

absl::Span<const std::string> Lock::keys() const {
  return state_ ? state_->keys() : absl::Span<const std::string>();
}

const std::vector<int>& Lock::slots() const {
  return state_ ? state_->slots() : EmptyState().slots();
}

int Lock::permits() const {
  return state_ ? static_cast<int>(state_->slots().size()) : 0;
}

bool Lock::shared() const { return state_ ? state_->shared() : false; }

const std::string& Lock::token() const {
  return state_ ? state_->TokenString() : EmptyState().TokenString();
}

MonotonicTime Lock::acquired_at() const {
  return state_ ? state_->acquired_at : MonotonicTime();
}

bool Lock::adopted() const { return state_ != nullptr && state_->adopted; }

MonotonicTime Lock::valid_until() const {
  if (!state_) return MonotonicTime();
  std::lock_guard<std::mutex> lock(state_->mu());
  return state_->valid_until;
}

absl::Duration Lock::remaining() const {
  if (!state_) return absl::ZeroDuration();
  absl::Duration left = internal::ToDuration(
      valid_until() - (state_->clock() != nullptr ? state_->clock()->Now()
                                                : MonotonicClock::now()));
  return left > absl::ZeroDuration() ? left : absl::ZeroDuration();
}

bool Lock::released() const {
  if (!state_) return false;
  std::lock_guard<std::mutex> lock(state_->mu());
  return state_->released;
}

bool Lock::valid() const {
  return state_ && !released() && !lost() && remaining() > absl::ZeroDuration();
}

uint64_t Lock::fence() const { return state_ ? state_->fence : 0; }

bool Lock::lost() const { return !lost_reason().ok(); }

absl::Status Lock::lost_reason() const {
  if (!state_) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(state_->mu());
  return state_->LostLocked();
}

std::vector<MasterVote> Lock::votes() const {
  if (!state_) return {};
  std::lock_guard<std::mutex> lock(state_->mu());
  return state_->VotesLocked();
}

}  // namespace redlock
