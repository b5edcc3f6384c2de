// Copyright 2026 The redlock Authors.
//
// What the restart guard's scenes assert, shared by the real-server tests
// (tests/engine/restart_guard_test.cc, tests/api/fencing_test.cc) and their
// replays on simulated time (tests/sim/sim_guard_test.cc): the same scene must
// pass the same assertions both ways, which is what shows the simulation is
// honest.

#ifndef REDLOCK_TESTS_SUPPORT_GUARD_EXPECTATIONS_H_
#define REDLOCK_TESTS_SUPPORT_GUARD_EXPECTATIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "tests/support/redis_server.h"

namespace redlock::testing {

// The value of `key` on master `i` of `cluster` (nullopt: no such key), or
// "<error>" (and a test failure) if it could not be read.
inline std::optional<std::string> ValueOn(const RedisCluster& cluster, int i,
                                          const std::string& key) {
  auto client = cluster.Client(i);
  EXPECT_TRUE(client.ok()) << client.status();
  if (!client.ok()) return "<error>";
  auto value = (*client)->Get(key);
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : "<error>";
}

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
// The vote names the restart guard — or the membership: a master reborn
// without its data lost its membership record with its marker, and the
// record is written with the "reborn" marker; whether it says "lost its
// data" or "not yet judged" depends on whether the new client's first
// attempt started before that write was answered (it need not wait for it).
// Take `health` once that master's marker is in (HealthOnceMarked()).
inline void ExpectTheRebornMastersGrantDidNotCount(
    const absl::StatusOr<Lock>& second, const std::vector<MasterHealth>& health,
    int reborn) {
  ASSERT_FALSE(second.ok()) << "double grant";
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAborted)
      << second.status();
  EXPECT_TRUE(second.status().message().find(
                  "failed (FAILED_PRECONDITION: restart guard: ") !=
                  std::string::npos ||
              second.status().message().find(
                  "failed (FAILED_PRECONDITION: membership: not yet judged (no "
                  "membership record") != std::string::npos)
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

// `health()` once master `i`'s marker is known to the client, polling
// `wait()` between reads, at most `tries` times.
template <typename HealthFn, typename WaitFn>
std::vector<MasterHealth> HealthOnceMarked(HealthFn health, WaitFn wait, int i,
                                           int tries = 200) {
  std::vector<MasterHealth> h = health();
  for (int t = 0; t < tries && h[i].marker.empty(); ++t) {
    wait();
    h = health();
  }
  return h;
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_GUARD_EXPECTATIONS_H_
