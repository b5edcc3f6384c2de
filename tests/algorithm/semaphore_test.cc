// Copyright 2026 The redlock Authors.
//
// Which slots a semaphore's attempt tries (src/algorithm/semaphore.h:
// ChooseSlots), from how many masters said each slot was free. Pure: no
// server. The semaphore on real servers is tests/engine/semaphore_test.cc.

#include "src/algorithm/semaphore.h"

#include <set>
#include <vector>

#include "absl/random/random.h"
#include "gtest/gtest.h"

namespace redlock {
namespace {

TEST(ChooseSlotsTest, SlotsFreeOnAQuorumAreTriedAtOnceOthersLater) {
  absl::BitGen gen;
  // Slot 3 alone free on a quorum (2) of masters: tried at once.
  internal::SlotChoice one = internal::ChooseSlots({0, 1, 0, 2}, 1, 2, gen);
  EXPECT_EQ(one.slots, (std::vector<int>{3}));
  EXPECT_TRUE(one.at_once);
  // Two wanted, one free on a quorum: the best two, not at once.
  internal::SlotChoice two = internal::ChooseSlots({0, 1, 0, 2}, 2, 2, gen);
  EXPECT_EQ(two.slots, (std::vector<int>{1, 3}));
  EXPECT_FALSE(two.at_once);
  // Ties are broken at random: each of slots 0 and 2 comes up.
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) {
    internal::SlotChoice tie = internal::ChooseSlots({2, 0, 2}, 1, 2, gen);
    ASSERT_EQ(tie.slots.size(), 1u);
    EXPECT_NE(tie.slots[0], 1);
    seen.insert(tie.slots[0]);
  }
  EXPECT_EQ(seen, (std::set<int>{0, 2}));
}

}  // namespace
}  // namespace redlock
