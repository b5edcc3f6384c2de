// Copyright 2026 The redlock Authors.
//
// What the restart guard's scenes assert, shared by the real-server tests
// (tests/restart_guard_test.cc, tests/fencing_test.cc) and their replays on
// simulated time (tests/sim/sim_guard_test.cc): the same scene must pass the
// same assertions both ways, which is what shows the simulation is honest.

#ifndef REDLOCK_TESTS_SUPPORT_GUARD_EXPECTATIONS_H_
#define REDLOCK_TESTS_SUPPORT_GUARD_EXPECTATIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/health.h"
#include "redlock/lock.h"

namespace redlock::testing {

// A fenced acquisition of `ttl`, one attempt.
inline AcquireOptions Fenced(absl::Duration ttl = absl::Seconds(5)) {
  AcquireOptions options;
  options.ttl = ttl;
  options.fencing = true;
  return options;
}

// A second client's acquisition while the first holds the lock on exactly a
// quorum of which master `reborn` restarted without its data: refused as
// held elsewhere (kAborted, not an outage) because the reborn master's grant
// is a failed vote, and Health() shows that master, and only it, held back.
inline void ExpectTheRebornMastersGrantDidNotCount(
    const absl::StatusOr<Lock>& second, const std::vector<MasterHealth>& health,
    int reborn) {
  ASSERT_FALSE(second.ok()) << "double grant";
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAborted)
      << second.status();
  EXPECT_NE(second.status().message().find(
                "restart guard: this master lost its data"),
            std::string::npos)
      << second.status();
  for (size_t i = 0; i < health.size(); ++i) {
    if (static_cast<int>(i) == reborn) {
      EXPECT_EQ(health[i].marker, "reborn");
      EXPECT_EQ(health[i].grants_count.code(),
                absl::StatusCode::kFailedPrecondition);
      EXPECT_NE(health[i].grants_count.message().find("restart guard"),
                std::string::npos)
          << health[i].grants_count;
    } else {
      EXPECT_EQ(health[i].marker, "trusted") << i;
      EXPECT_TRUE(health[i].grants_count.ok()) << i << health[i].grants_count;
    }
  }
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_GUARD_EXPECTATIONS_H_
