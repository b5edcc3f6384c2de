// Copyright 2026 The redlock Authors.
//
// AwaitEveryMasterHeard: a woken waiter starts once a quorum of masters named
// it, so the other masters' release messages may reach its subscribers after
// it won. Tests that check every master's subscriber heard its message wait
// for them here (bounded) instead of reading Health() once.
//
//   for (const MasterHealth& h : AwaitEveryMasterHeard(*waiter)) {
//     EXPECT_GE(h.subscriber_messages, 1) << h.master;
//   }

#ifndef REDLOCK_TESTS_SUPPORT_HEARD_MESSAGES_H_
#define REDLOCK_TESTS_SUPPORT_HEARD_MESSAGES_H_

#include <algorithm>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redlock/health.h"

namespace redlock::testing {

// Polls `client.Health()` until every master's subscriber has heard at least
// one message or `bound` passed; returns the last Health() read, for the
// caller to assert on (so a master that never heard one still fails).
template <typename Client>
std::vector<MasterHealth> AwaitEveryMasterHeard(
    const Client& client, absl::Duration bound = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + bound;
  std::vector<MasterHealth> health = client.Health();
  while (absl::Now() < deadline &&
         !std::all_of(health.begin(), health.end(), [](const MasterHealth& h) {
           return h.subscriber_messages >= 1;
         })) {
    absl::SleepFor(absl::Milliseconds(20));
    health = client.Health();
  }
  return health;
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_HEARD_MESSAGES_H_
