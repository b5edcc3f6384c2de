// Copyright 2026 The redlock Authors.

#include "src/algorithm/semaphore.h"

#include <algorithm>
#include <numeric>

#include "absl/random/distributions.h"

namespace redlock::internal {

SlotChoice ChooseSlots(const std::vector<int>& free_votes, int permits,
                       int quorum, absl::BitGenRef gen) {
  std::vector<int> order(free_votes.size());
  std::iota(order.begin(), order.end(), 0);
  // A uniform shuffle (Fisher-Yates), then a stable sort by votes: equal
  // votes stay in random order.
  for (size_t i = order.size(); i > 1; --i) {
    const size_t j = absl::Uniform<size_t>(gen, 0, i);
    std::swap(order[i - 1], order[j]);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return free_votes[a] > free_votes[b]; });
  SlotChoice choice;
  choice.slots.assign(order.begin(), order.begin() + permits);
  choice.at_once = free_votes[choice.slots.back()] >= quorum;
  std::sort(choice.slots.begin(), choice.slots.end());
  return choice;
}

}  // namespace redlock::internal
