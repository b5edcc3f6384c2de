// Copyright 2026 The redlock Authors.
//
// Choosing a counting semaphore's candidate slots after a refused attempt.
// Pure: no I/O, no clock; the randomness is the caller's.

#ifndef REDLOCK_SRC_ALGORITHM_SEMAPHORE_H_
#define REDLOCK_SRC_ALGORITHM_SEMAPHORE_H_

#include <vector>

#include "absl/random/bit_gen_ref.h"

namespace redlock::internal {

// The semaphore's limit: Redlock::AcquirePermits() refuses others.
inline constexpr int kMaxSemaphoreLimit = 1024;

struct SlotChoice {
  std::vector<int> slots;  // `permits` distinct slots, ascending.
  // Every one of `slots` was reported free by at least `quorum` masters:
  // worth trying at once rather than after the retry delay.
  bool at_once = false;
};

// `free_votes[s]`: how many masters that answered the last attempt reported
// slot s free. Picks the `permits` slots with the most votes, ties broken
// uniformly at random; at_once if each of them has `quorum` votes or more.
// Requires 1 <= permits <= free_votes.size().
SlotChoice ChooseSlots(const std::vector<int>& free_votes, int permits,
                       int quorum, absl::BitGenRef gen);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_SEMAPHORE_H_
