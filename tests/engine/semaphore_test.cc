// Copyright 2026 The redlock Authors.
//
// Counting semaphores (Redlock::AcquirePermits()) on real masters: at most
// `limit` permits held at once, permit sets all or none, the partition scene
// that defeats a majority of counters, clients that disagree about the
// limit, expiry on the masters' clocks, and extension of the slots and the
// limit key.

#include "src/algorithm/semaphore.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/health.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "src/algorithm/scripts.h"
#include "tests/support/attempt_counter.h"
#include "tests/support/await_call.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/heard_messages.h"
#include "tests/support/loop_runner.h"
#include "tests/support/own_masters_test.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

class SemaphoreTest : public testing::OwnMastersTest {
 protected:
  void TearDown() override {
    // Clients go before the proxies they use.
    clients_.clear();
    proxies_.clear();
  }

  static SemaphoreOptions Sem(int limit, int permits = 1) {
    SemaphoreOptions sem;
    sem.limit = limit;
    sem.permits = permits;
    return sem;
  }
  static AcquireOptions Ttl(absl::Duration ttl,
                            absl::Duration wait = absl::ZeroDuration()) {
    AcquireOptions options;
    options.ttl = ttl;
    options.wait = wait;
    return options;
  }

  std::vector<std::unique_ptr<FaultProxy>> proxies_;
  std::vector<std::unique_ptr<Redlock>> clients_;
};

TEST_F(SemaphoreTest, AFourthPermitOfThreeIsRefusedUntilOneIsReleased) {
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int c = 0; c < 4; ++c) clients.push_back(MakeClient());
  std::vector<Lock> held;
  std::set<int> slots;
  for (int c = 0; c < 3; ++c) {
    absl::StatusOr<Lock> permit =
        clients[c]->AcquirePermits("pool", Sem(3), Ttl(absl::Seconds(10)));
    ASSERT_TRUE(permit.ok()) << c << ": " << permit.status();
    EXPECT_EQ(permit->resource(), "pool");
    ASSERT_EQ(permit->slots().size(), 1u);
    EXPECT_EQ(permit->permits(), 1);
    EXPECT_EQ(permit->keys(), (std::vector<std::string>{SemaphoreSlotKey(
                                  Options(), "pool", permit->slots()[0])}));
    slots.insert(permit->slots()[0]);
    held.push_back(*permit);
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2}));
  absl::StatusOr<Lock> fourth =
      clients[3]->AcquirePermits("pool", Sem(3), Ttl(absl::Seconds(10)));
  ASSERT_EQ(fourth.status().code(), absl::StatusCode::kAborted)
      << fourth.status();
  // The reason names the semaphore and how the masters voted.
  EXPECT_TRUE(absl::StrContains(fourth.status().message(), "\"pool\""))
      << fourth.status();
  EXPECT_TRUE(absl::StrContains(fourth.status().message(),
                                "no 1 of the 3 slots free together"))
      << fourth.status();
  EXPECT_TRUE(absl::StrContains(fourth.status().message(), "denied"))
      << fourth.status();
  // The middle one goes: the fourth gets its slot, in one call without a
  // wait (its first candidate, slot 0, is held; slot 1 is reported free).
  // Every master has the slot free before the fourth asks (a release
  // returns at a quorum; the third master could still be on its way).
  ReleaseOptions everywhere;
  everywhere.wait_for_all_masters = true;
  ASSERT_TRUE(clients[1]->Release(held[1], everywhere).ok());
  absl::StatusOr<Lock> after =
      clients[3]->AcquirePermits("pool", Sem(3), Ttl(absl::Seconds(10)));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->slots(), held[1].slots());
}

TEST_F(SemaphoreTest, APermitSetIsAllOrNone) {
  auto a = MakeClient();
  auto b = MakeClient();
  absl::StatusOr<Lock> three =
      a->AcquirePermits("gpus", Sem(4, 3), Ttl(absl::Seconds(10)));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->slots(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(three->keys().size(), 3u);
  absl::StatusOr<Lock> two =
      b->AcquirePermits("gpus", Sem(4, 2), Ttl(absl::Seconds(10)));
  EXPECT_EQ(two.status().code(), absl::StatusCode::kAborted) << two.status();
  // Nothing of the refused set stayed behind: slot 3 is free everywhere.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Pttl(i, SemaphoreSlotKey(Options(), "gpus", 3)), -2) << i;
  }
  absl::StatusOr<Lock> one =
      b->AcquirePermits("gpus", Sem(4, 1), Ttl(absl::Seconds(10)));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->slots(), (std::vector<int>{3}));
}

// Three masters, limit 2, three clients each cut off from a different
// master. Counting holders per master would admit all three (each master
// sees only two of them); slots do not.
TEST_F(SemaphoreTest, ThreeClientsEachCutOffFromOneMasterNeverHoldThree) {
  ASSERT_TRUE(testing::MarkDeploymentTrusted(*cluster_).ok());
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int c = 0; c < 3; ++c) {
    std::vector<std::string> uris;
    for (int m = 0; m < 3; ++m) {
      auto proxy =
          FaultProxy::Start({.upstream_port = cluster_->server(m).port()});
      ASSERT_TRUE(proxy.ok()) << proxy.status();
      if (m == c) (*proxy)->SetMode(FaultProxy::Mode::kRefuse);
      uris.push_back((*proxy)->Uri());
      proxies_.push_back(*std::move(proxy));
    }
    clients.push_back(MakeClient(std::move(uris)));
  }
  std::vector<Lock> held;
  for (int c = 0; c < 2; ++c) {
    absl::StatusOr<Lock> permit = clients[c]->AcquirePermits(
        "scene", Sem(2), Ttl(absl::Seconds(20), absl::Seconds(5)));
    ASSERT_TRUE(permit.ok()) << c << ": " << permit.status();
    held.push_back(*permit);
  }
  absl::StatusOr<Lock> third = clients[2]->AcquirePermits(
      "scene", Sem(2), Ttl(absl::Seconds(20), absl::Seconds(1)));
  EXPECT_EQ(third.status().code(), absl::StatusCode::kAborted)
      << third.status();
  EXPECT_FALSE(third.status().message().empty());
  // The two holders still hold valid permits on different slots.
  EXPECT_TRUE(held[0].valid());
  EXPECT_TRUE(held[1].valid());
  EXPECT_NE(held[0].slots(), held[1].slots());
  int valid = 0;
  for (const Lock& lock : held) valid += lock.valid();
  if (third.ok()) valid += third->valid();
  EXPECT_LE(valid, 2);
  clients_ = std::move(clients);
}

TEST_F(SemaphoreTest, ClientsThatDisagreeAboutTheLimitAreRefused) {
  auto a = MakeClient();
  auto b = MakeClient();
  absl::StatusOr<Lock> holder =
      a->AcquirePermits("mixed", Sem(3), Ttl(absl::Seconds(10)));
  ASSERT_TRUE(holder.ok()) << holder.status();
  absl::StatusOr<Lock> other = b->AcquirePermits(
      "mixed", Sem(2), Ttl(absl::Seconds(10), absl::Seconds(1)));
  ASSERT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition)
      << other.status();
  EXPECT_TRUE(
      absl::StrContains(other.status().message(), "this client's limit is 2"))
      << other.status();
  EXPECT_TRUE(absl::StrContains(other.status().message(), " has 3"))
      << other.status();
  // It took nothing: slot 1 (the holder has slot 0) is free everywhere.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Pttl(i, SemaphoreSlotKey(Options(), "mixed", 1)), -2) << i;
  }
}

TEST_F(SemaphoreTest, AHolderThatNeverReleasesFreesItsSlotAfterItsTtl) {
  const absl::Duration ttl = absl::Seconds(2);
  {
    auto gone = MakeClient();
    absl::StatusOr<Lock> permit =
        gone->AcquirePermits("lease", Sem(1), Ttl(ttl));
    ASSERT_TRUE(permit.ok()) << permit.status();
    // Destroying the client releases nothing: the slot lives out its TTL.
  }
  const absl::Time taken = absl::Now();
  auto next = MakeClient();
  absl::SleepFor(taken + ttl / 2 - absl::Milliseconds(300) - absl::Now());
  absl::StatusOr<Lock> early = next->AcquirePermits("lease", Sem(1), Ttl(ttl));
  EXPECT_EQ(early.status().code(), absl::StatusCode::kAborted)
      << early.status();
  absl::SleepFor(taken + ttl + absl::Milliseconds(500) - absl::Now());
  absl::StatusOr<Lock> late = next->AcquirePermits("lease", Sem(1), Ttl(ttl));
  EXPECT_TRUE(late.ok()) << late.status();
}

TEST_F(SemaphoreTest, ExtendingAPermitRefreshesItsSlotsAndTheLimitKey) {
  auto client = MakeClient();
  absl::StatusOr<Lock> permit =
      client->AcquirePermits("renew", Sem(2, 2), Ttl(absl::Seconds(5)));
  ASSERT_TRUE(permit.ok()) << permit.status();
  const std::string limit_key = SemaphoreLimitKey(Options(), "renew");
  ASSERT_TRUE(client->Extend(*permit, absl::Seconds(60)).ok());
  absl::SleepFor(absl::Milliseconds(50));  // Let every master apply it.
  for (int i = 0; i < 3; ++i) {
    for (const std::string& key : permit->keys()) {
      EXPECT_GT(Pttl(i, key), 50'000) << key << " on master " << i;
    }
    EXPECT_GT(Pttl(i, limit_key), 50'000) << i;
  }
  // A shorter extension shortens the slots, never the limit key: it must
  // outlive every slot of every holder.
  ASSERT_TRUE(client->Extend(*permit, absl::Seconds(5)).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    for (const std::string& key : permit->keys()) {
      EXPECT_LE(Pttl(i, key), 5'000) << key << " on master " << i;
    }
    EXPECT_GT(Pttl(i, limit_key), 50'000) << i;
  }
}

// The documented range at its ends: limit 1 and limit 1024, one permit and
// all 1024 at once. Each acquisition's reply lists every slot's state; at
// 1024 slots a list of integers was longer than the client's 64 KiB reply
// bound, every master's reply was refused and the acquisition failed.
TEST_F(SemaphoreTest, LimitsOneAndTenTwentyFourWorkAtTheirEnds) {
  auto client = MakeClient();
  auto other = MakeClient();
  // Limit 1: a mutex.
  absl::StatusOr<Lock> one =
      client->AcquirePermits("one", Sem(1), Ttl(absl::Seconds(10)));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(
      other->AcquirePermits("one", Sem(1), Ttl(absl::Seconds(10))).ok());
  ASSERT_TRUE(client->Extend(*one, absl::Seconds(20)).ok());
  ASSERT_TRUE(client->Release(*one).ok());
  ASSERT_TRUE(
      other->AcquirePermits("one", Sem(1), Ttl(absl::Seconds(10))).ok());

  // Limit 1024: one permit, then the other 1023 at once, then none.
  absl::StatusOr<Lock> single =
      client->AcquirePermits("wide", Sem(1024), Ttl(absl::Seconds(30)));
  ASSERT_TRUE(single.ok()) << single.status();
  absl::StatusOr<Lock> rest =
      other->AcquirePermits("wide", Sem(1024, 1023), Ttl(absl::Seconds(30)));
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(rest->keys().size(), 1023u);
  EXPECT_FALSE(
      other->AcquirePermits("wide", Sem(1024), Ttl(absl::Seconds(30))).ok());
  ASSERT_TRUE(other->Extend(*rest, absl::Seconds(60)).ok());
  absl::SleepFor(absl::Milliseconds(50));  // Let every master apply it.
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(Pttl(i, rest->keys().front()), 50'000) << i;
    EXPECT_GT(Pttl(i, rest->keys().back()), 50'000) << i;
  }
  ASSERT_TRUE(other->Release(*rest).ok());
  ASSERT_TRUE(client->Release(*single).ok());
  // All 1024 at once, by one holder.
  absl::StatusOr<Lock> all =
      client->AcquirePermits("wide", Sem(1024, 1024), Ttl(absl::Seconds(30)));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->keys().size(), 1024u);
  ASSERT_TRUE(client->Extend(*all, absl::Seconds(60)).ok());
  ASSERT_TRUE(client->Release(*all).ok());
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    for (int slot : {0, 511, 1023}) {
      EXPECT_EQ(Pttl(i, SemaphoreSlotKey(Options(), "wide", slot)), -2)
          << "slot " << slot << " on master " << i;
    }
  }
}

TEST_F(SemaphoreTest, AShortGrantNeverShortensTheLimitKey) {
  auto a = MakeClient();
  auto b = MakeClient();
  absl::StatusOr<Lock> slow =
      a->AcquirePermits("keeps", Sem(2), Ttl(absl::Seconds(30)));
  ASSERT_TRUE(slow.ok()) << slow.status();
  absl::StatusOr<Lock> quick =
      b->AcquirePermits("keeps", Sem(2), Ttl(absl::Seconds(2)));
  ASSERT_TRUE(quick.ok()) << quick.status();
  absl::SleepFor(absl::Milliseconds(50));  // Let every master apply it.
  // On every master that holds the 30s slot, the limit key covers it, not
  // only the 2s one. A quorum holds it; a master the first grant did not
  // reach (a fresh client counts a quorum, not every master) has only the
  // 2s slot for its limit key to cover.
  ASSERT_EQ(slow->keys().size(), 1u);
  int holding = 0;
  for (int i = 0; i < 3; ++i) {
    if (On(i, {"GET", slow->keys().front()}).str != slow->token()) continue;
    ++holding;
    EXPECT_GT(Pttl(i, SemaphoreLimitKey(Options(), "keeps")), 25'000) << i;
  }
  EXPECT_GE(holding, 2);
}

// The keep-alive extends a permit set through the semaphore extend script,
// as it extends a lock: the slots outlive their TTL while it runs.
TEST_F(SemaphoreTest, AKeptAlivePermitSetOutlivesItsTtl) {
  testing::LoopRunner loop;
  auto engine =
      AsyncRedlock::Create(loop.base(), testing::TestOptions(cluster_->Uris()));
  ASSERT_TRUE(engine.ok()) << engine.status();
  const absl::Duration ttl = absl::Seconds(1);
  absl::StatusOr<Lock> permit =
      testing::AwaitCall<absl::StatusOr<Lock>>(loop, [&](auto done) {
        return (*engine)->AcquirePermitsAsync("kept", Sem(3, 2), Ttl(ttl),
                                              std::move(done));
      });
  ASSERT_TRUE(permit.ok()) << permit.status();
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(200);
  hold.safety_margin = absl::Milliseconds(300);
  {
    absl::StatusOr<KeepAliveHandle> keeper =
        (*engine)->KeepAlive(*permit, ttl, std::move(hold));
    ASSERT_TRUE(keeper.ok()) << keeper.status();
    loop.RunFor(3 * ttl);
    EXPECT_FALSE(permit->lost()) << permit->lost_reason();
    EXPECT_TRUE(permit->valid());
    for (int i = 0; i < 3; ++i) {
      for (const std::string& key : permit->keys()) {
        auto client = cluster_->Client(i);
        ASSERT_TRUE(client.ok());
        EXPECT_EQ((*client)->Get(key).value_or(std::nullopt), permit->token())
            << key << " on master " << i;
      }
      EXPECT_GT(Pttl(i, SemaphoreLimitKey(Options(), "kept")), 0) << i;
    }
  }
  // Stopping the keep-alive (destroying its handle) released the set.
  loop.RunFor(absl::Milliseconds(200));
  EXPECT_TRUE(permit->released());
  for (int i = 0; i < 3; ++i) {
    for (const std::string& key : permit->keys()) {
      EXPECT_EQ(Pttl(i, key), -2) << key << " on master " << i;
    }
  }
}

// PUBSUB NUMSUB of semaphore `name`'s channel (its limit key) on master
// `i`, awaited (bounded) until every master has at least `n`.
bool AwaitSemaphoreSubscribers(RedisCluster& cluster, const std::string& name,
                               int64_t n) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    bool all = true;
    for (int i = 0; i < cluster.size() && all; ++i) {
      auto client = cluster.Client(i);
      if (!client.ok()) return false;
      auto reply = (*client)->Command(
          {"PUBSUB", "NUMSUB", SemaphoreLimitKey(Options(), name)});
      all = reply.ok() && reply->elements.size() == 2 &&
            reply->elements[1].integer >= n;
    }
    if (all) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

// A waiter for a permit listens on its semaphore's channel, and a permit's
// release wakes it: it has the freed slot long before its next poll (10s
// here), whichever slot it was going to try.
TEST_F(SemaphoreTest, APermitReleaseWakesAWaiterBeforeItsPoll) {
  auto holder = MakeClient();
  std::vector<Lock> held;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Lock> permit =
        holder->AcquirePermits("woken", Sem(2), Ttl(absl::Seconds(30)));
    ASSERT_TRUE(permit.ok()) << permit.status();
    held.push_back(*permit);
  }
  Options options = testing::TestOptions(cluster_->Uris());
  options.retry.min_delay = absl::Seconds(10);
  options.retry.max_delay = absl::Seconds(10);
  auto waiter = Redlock::Create(std::move(options));
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  absl::StatusOr<Lock> got;
  std::thread waiting([&] {
    got = (*waiter)->AcquirePermits("woken", Sem(2),
                                    Ttl(absl::Seconds(30), absl::Seconds(20)));
  });
  ASSERT_TRUE(AwaitSemaphoreSubscribers(*cluster_, "woken", 1));
  absl::SleepFor(absl::Milliseconds(100));  // Its check once subscribed.
  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder->Release(held[1]).ok());
  waiting.join();
  ASSERT_TRUE(got.ok()) << got.status();
  // Generous: far below the 10s poll, whatever the machine's load.
  EXPECT_LT(absl::Now() - released, absl::Seconds(4));
  EXPECT_EQ(got->slots(), held[1].slots());
  // It heard the release (on the semaphore's channel) from every master;
  // woken by a quorum's messages, perhaps after it won.
  for (const MasterHealth& h : testing::AwaitEveryMasterHeard(**waiter)) {
    EXPECT_GE(h.subscriber_messages, 1) << h.master;
  }
  ASSERT_TRUE((*waiter)->Release(*got).ok());
  ASSERT_TRUE(holder->Release(held[0]).ok());
}

// Four waiters for the one permit of a full semaphore; its release wakes
// them all, each after its own jitter (up to 1s here, so they are far
// apart). The first takes the permit, and the win that leaves no slot free
// announces it ("taken" on the semaphore's channel): the others stand down
// until their next poll (10s) instead of each trying in vain.
TEST_F(SemaphoreTest, WokenPermitWaitersStandDownWhenTheSemaphoreIsFullAgain) {
  auto holder = MakeClient();
  absl::StatusOr<Lock> held =
      holder->AcquirePermits("full", Sem(1), Ttl(absl::Seconds(30)));
  ASSERT_TRUE(held.ok()) << held.status();
  constexpr int kWaiters = 4;
  auto counter = std::make_shared<testing::AttemptCounter>();
  std::vector<std::unique_ptr<Redlock>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    Options options = testing::TestOptions(cluster_->Uris());
    options.retry.min_delay = absl::Seconds(10);
    options.retry.max_delay = absl::Seconds(10);
    options.retry.wake_jitter = absl::Seconds(1);
    options.observer = counter;
    auto waiter = Redlock::Create(std::move(options));
    ASSERT_TRUE(waiter.ok()) << waiter.status();
    waiters.push_back(*std::move(waiter));
  }
  std::vector<absl::StatusOr<Lock>> got(kWaiters);
  std::vector<std::thread> waiting;
  for (int i = 0; i < kWaiters; ++i) {
    waiting.emplace_back([&, i] {
      got[i] = waiters[i]->AcquirePermits(
          "full", Sem(1), Ttl(absl::Seconds(30), absl::Seconds(6)));
    });
  }
  ASSERT_TRUE(AwaitSemaphoreSubscribers(*cluster_, "full", kWaiters));
  // Each waiter's first attempt and its check once subscribed lost.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (counter->lost() < 2 * kWaiters && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(counter->lost(), 2 * kWaiters);

  ASSERT_TRUE(holder->Release(*held).ok());
  absl::SleepFor(absl::Seconds(3));
  // Two waiters whose jitters fall within a round trip of each other may
  // both try; more than one such collision would be a coincidence.
  EXPECT_LE(counter->lost() - 2 * kWaiters, 1);
  for (std::thread& t : waiting) t.join();  // The others' waits end at 6s.
  int won = 0;
  for (int i = 0; i < kWaiters; ++i) {
    if (!got[i].ok()) continue;
    ++won;
    waiters[i]->Release(*got[i]).IgnoreError();
  }
  EXPECT_EQ(won, 1);
}

// WithPermits keeps the permit set alive while the work runs (here for
// three TTLs), so nobody else gets the one slot; it is free once the work
// returns. A scoped permit is released on scope exit.
TEST_F(SemaphoreTest, WithPermitsHoldsThePermitsForTheWorkAndReleasesAfter) {
  auto client = MakeClient();
  auto other = MakeClient();
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(200);
  hold.safety_margin = absl::Milliseconds(300);
  int refused_meanwhile = 0;
  const absl::Status status = client->WithPermits(
      "solo", Sem(1), Ttl(absl::Seconds(1)),
      [&](const Lock& permit) {
        EXPECT_EQ(permit.permits(), 1);
        for (int i = 0; i < 6; ++i) {
          absl::SleepFor(absl::Milliseconds(500));
          absl::StatusOr<Lock> taken =
              other->AcquirePermits("solo", Sem(1), Ttl(absl::Seconds(1)));
          if (taken.status().code() == absl::StatusCode::kAborted) {
            ++refused_meanwhile;
          } else if (taken.ok()) {
            other->Release(*taken).IgnoreError();
          }
        }
        return absl::OkStatus();
      },
      std::move(hold));
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(refused_meanwhile, 6) << "the slot was free while the work ran";
  {
    absl::StatusOr<ScopedLock> scoped =
        other->AcquirePermitsScoped("solo", Sem(1), Ttl(absl::Seconds(30)));
    ASSERT_TRUE(scoped.ok()) << scoped.status();
    EXPECT_EQ(client->AcquirePermits("solo", Sem(1), Ttl(absl::Seconds(30)))
                  .status()
                  .code(),
              absl::StatusCode::kAborted);
  }
  // Released on scope exit (awaited, at a quorum at least).
  absl::StatusOr<Lock> after = client->AcquirePermits(
      "solo", Sem(1), Ttl(absl::Seconds(30), absl::Seconds(2)));
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_TRUE(client->Release(*after).ok());
}

// A client that never takes a permit sends the handshake it always did: the
// semaphore's scripts are loaded on a connection just ahead of their first
// call there, and that first call succeeds (no NOSCRIPT, no second attempt).
TEST_F(SemaphoreTest,
       SemaphoreScriptsAreLoadedOnTheirFirstUseNotByTheHandshake) {
  auto client = MakeClient();
  absl::StatusOr<Lock> plain = client->TryAcquire("plain", absl::Seconds(10));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(client->Release(*plain).ok());
  // Which of {semaphore acquire, semaphore extend, release} master i has.
  auto loaded = [&](int i) {
    auto redis = cluster_->Client(i);
    EXPECT_TRUE(redis.ok());
    auto reply = (*redis)->Command({"SCRIPT", "EXISTS",
                                    internal::SemaphoreAcquireScript().sha1,
                                    internal::SemaphoreExtendScript().sha1,
                                    internal::ReleaseScript().sha1});
    EXPECT_TRUE(reply.ok());
    std::vector<int64_t> flags;
    if (reply.ok()) {
      for (const auto& e : reply->elements) flags.push_back(e.integer);
    }
    return flags;
  };
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(loaded(i), (std::vector<int64_t>{0, 0, 1})) << "master " << i;
  }
  absl::StatusOr<Lock> permit =
      client->AcquirePermits("pool", Sem(2), Ttl(absl::Seconds(10)));
  ASSERT_TRUE(permit.ok()) << permit.status();
  ASSERT_TRUE(client->Extend(*permit, absl::Seconds(10)).ok());
  int with_both = 0;
  for (int i = 0; i < 3; ++i) {
    if (loaded(i) == std::vector<int64_t>{1, 1, 1}) ++with_both;
  }
  EXPECT_GE(with_both, 2);  // At quorum: the third may still be answering.
  // Loaded ahead, not found missing and sent again as EVAL.
  for (const MasterHealth& h : client->Health()) {
    EXPECT_EQ(h.noscript_fallbacks, 0) << h.master;
  }
  ASSERT_TRUE(client->Release(*permit).ok());
}

TEST_F(SemaphoreTest, BadSemaphoreOptionsAreRefusedNamingTheField) {
  auto client = MakeClient();
  struct Case {
    int limit;
    int permits;
    const char* field;
  };
  for (const Case& c : {Case{0, 1, "limit"}, Case{1025, 1, "limit"},
                        Case{3, 0, "permits"}, Case{3, 4, "permits"}}) {
    absl::StatusOr<Lock> permit = client->AcquirePermits(
        "bad", Sem(c.limit, c.permits), Ttl(absl::Seconds(5)));
    EXPECT_EQ(permit.status().code(), absl::StatusCode::kInvalidArgument)
        << c.limit << " " << c.permits;
    EXPECT_TRUE(absl::StrContains(permit.status().message(),
                                  absl::StrCat("SemaphoreOptions.", c.field)))
        << permit.status();
  }
  AcquireOptions fenced = Ttl(absl::Seconds(5));
  fenced.fencing = true;
  absl::StatusOr<Lock> permit = client->AcquirePermits("bad", Sem(3), fenced);
  EXPECT_EQ(permit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(permit.status().message(), "fencing"))
      << permit.status();
}

// --- Adopt() of a permit set (AdoptOptions::limit and ::slots) -------------

AdoptOptions PermitSet(int limit, std::vector<int> slots) {
  AdoptOptions adopt;
  adopt.limit = limit;
  adopt.slots = std::move(slots);
  return adopt;
}

// Another process's permit set, handed over by token, limit and slots: this
// client extends its slots and the limit key, and releases the slots, and
// nobody else's.
TEST_F(SemaphoreTest,
       AnAdoptedPermitSetExtendsItsSlotsAndTheLimitKeyAndReleasesThem) {
  auto owner = MakeClient();
  auto other = MakeClient();
  auto heir = MakeClient();
  // The scene needs the owner's permits on all three masters: its first
  // attempt may start once two are judged, and on a loaded machine the third
  // may still be connecting then (its vote fails and it gets no slot).
  for (int k = 0; k < 200; ++k) {
    const std::vector<MasterHealth> health = owner->Health();
    if (std::all_of(health.begin(), health.end(), [](const MasterHealth& h) {
          return h.connected && h.grants_count.ok();
        })) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(25));
  }
  absl::StatusOr<Lock> set =
      owner->AcquirePermits("pool", Sem(4, 2), Ttl(absl::Seconds(5)));
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->slots(), (std::vector<int>{0, 1}));
  // A straggler's SET may land after the decision: wait for it.
  auto everywhere = [&] {
    for (const std::string& key : set->keys()) {
      for (int i = 0; i < 3; ++i) {
        if (Pttl(i, key) <= 0) return false;
      }
    }
    return true;
  };
  for (int k = 0; k < 100 && !everywhere(); ++k) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_TRUE(everywhere()) << "the owner's slots are not on every master";
  absl::StatusOr<Lock> theirs =
      other->AcquirePermits("pool", Sem(4), Ttl(absl::Seconds(20)));
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  // Slot 0 refused it; 2 and 3 were free everywhere, a tie broken at random.
  ASSERT_EQ(theirs->slots().size(), 1u);
  EXPECT_TRUE(theirs->slots()[0] == 2 || theirs->slots()[0] == 3)
      << theirs->slots()[0];

  // Slots in any order: the Lock has them ascending, keys in that order.
  absl::StatusOr<Lock> adopted =
      heir->Adopt("pool", set->token(), PermitSet(4, {1, 0}));
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_TRUE(adopted->adopted());
  EXPECT_FALSE(adopted->valid());  // Unknown until an extension.
  EXPECT_FALSE(adopted->shared());
  EXPECT_EQ(adopted->slots(), (std::vector<int>{0, 1}));
  EXPECT_EQ(adopted->permits(), 2);
  EXPECT_EQ(adopted->keys(), set->keys());
  EXPECT_EQ(adopted->token(), set->token());

  ASSERT_TRUE(heir->Extend(*adopted, absl::Seconds(60)).ok());
  EXPECT_TRUE(adopted->valid());
  absl::SleepFor(absl::Milliseconds(50));  // Let every master apply it.
  const std::string limit_key = SemaphoreLimitKey(Options(), "pool");
  for (int i = 0; i < 3; ++i) {
    for (const std::string& key : set->keys()) {
      EXPECT_GT(Pttl(i, key), 50'000) << key << " on master " << i;
    }
    EXPECT_GT(Pttl(i, limit_key), 50'000) << i;
    EXPECT_LE(Pttl(i, theirs->key()), 20'000) << i;  // Not extended.
  }

  absl::StatusOr<ReleaseReport> released = heir->Release(*adopted);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_GE(released->released, 2) << released->released;
  absl::SleepFor(absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    for (const std::string& key : set->keys()) {
      EXPECT_EQ(*(*client)->Get(key), std::nullopt) << key << " on " << i;
    }
    EXPECT_EQ(*(*client)->Get(theirs->key()), theirs->token()) << i;
  }
  // The freed slots are taken again.
  absl::StatusOr<Lock> next =
      other->AcquirePermits("pool", Sem(4, 2), Ttl(absl::Seconds(5)));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->slots(), (std::vector<int>{0, 1}));
}

// What the masters do not confirm is refused: another token, a slot the
// token does not hold, another limit. Nothing changes on the masters.
TEST_F(SemaphoreTest, AnAdoptedPermitSetWithAWrongTokenSlotOrLimitIsRefused) {
  auto owner = MakeClient();
  auto heir = MakeClient();
  absl::StatusOr<Lock> set =
      owner->AcquirePermits("pool", Sem(3), Ttl(absl::Seconds(20)));
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->slots(), (std::vector<int>{0}));
  const std::string limit_key = SemaphoreLimitKey(Options(), "pool");
  auto unchanged = [&](absl::string_view what) {
    absl::SleepFor(absl::Milliseconds(50));
    for (int i = 0; i < 3; ++i) {
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok());
      EXPECT_EQ(*(*client)->Get(set->key()), set->token()) << what << " " << i;
      EXPECT_LE(Pttl(i, set->key()), 20'000) << what << " " << i;
      EXPECT_EQ(*(*client)->Get(limit_key), "3") << what << " " << i;
      EXPECT_LE(Pttl(i, limit_key), 20'000) << what << " " << i;
      EXPECT_EQ(*(*client)->Get(SemaphoreSlotKey(Options(), "pool", 1)),
                std::nullopt)
          << what << " " << i;
    }
  };

  absl::StatusOr<Lock> wrong_token = heir->Adopt(
      "pool", "0123456789abcdef0123456789abcdef", PermitSet(3, {0}));
  ASSERT_TRUE(wrong_token.ok()) << wrong_token.status();
  EXPECT_EQ(heir->Extend(*wrong_token, absl::Seconds(60)).code(),
            absl::StatusCode::kAborted);
  absl::StatusOr<ReleaseReport> report = heir->Release(*wrong_token);
  EXPECT_TRUE(report.ok() ? report->released == 0 : true);
  unchanged("wrong token");

  absl::StatusOr<Lock> wrong_slot =
      heir->Adopt("pool", set->token(), PermitSet(3, {1}));
  ASSERT_TRUE(wrong_slot.ok()) << wrong_slot.status();
  EXPECT_EQ(heir->Extend(*wrong_slot, absl::Seconds(60)).code(),
            absl::StatusCode::kAborted);
  unchanged("wrong slot");

  absl::StatusOr<Lock> wrong_limit =
      heir->Adopt("pool", set->token(), PermitSet(4, {0}));
  ASSERT_TRUE(wrong_limit.ok()) << wrong_limit.status();
  const absl::Status extended = heir->Extend(*wrong_limit, absl::Seconds(60));
  EXPECT_FALSE(extended.ok());
  EXPECT_TRUE(absl::StrContains(extended.message(), "limit")) << extended;
  EXPECT_FALSE(wrong_limit->valid());
  unchanged("wrong limit");
}

TEST_F(SemaphoreTest, BadAdoptOptionsAreRefusedNamingTheField) {
  auto client = MakeClient();
  testing::LoopRunner loop;
  auto engine =
      AsyncRedlock::Create(loop.base(), testing::TestOptions(cluster_->Uris()));
  ASSERT_TRUE(engine.ok()) << engine.status();
  AdoptOptions reader_with_limit = PermitSet(2, {0});
  reader_with_limit.shared = true;
  AdoptOptions fenced_set = PermitSet(2, {0});
  fenced_set.fence = 7;
  AdoptOptions fenced_reader;
  fenced_reader.shared = true;
  fenced_reader.fence = 7;
  struct Case {
    AdoptOptions options;
    std::string field;
  } cases[] = {
      {PermitSet(0, {0}), "AdoptOptions.limit"},
      {PermitSet(1025, {0}), "AdoptOptions.limit"},
      {PermitSet(-1, {}), "AdoptOptions.limit"},
      {PermitSet(2, {}), "AdoptOptions.slots"},
      {PermitSet(2, {2}), "AdoptOptions.slots"},
      {PermitSet(2, {-1}), "AdoptOptions.slots"},
      {PermitSet(2, {1, 1}), "AdoptOptions.slots"},
      {reader_with_limit, "AdoptOptions.shared"},
      {fenced_set, "AdoptOptions.fence"},
      {fenced_reader, "AdoptOptions.fence"},
  };
  const std::string token = "0123456789abcdef0123456789abcdef";
  for (const Case& c : cases) {
    absl::StatusOr<Lock> blocking = client->Adopt("pool", token, c.options);
    EXPECT_EQ(blocking.status().code(), absl::StatusCode::kInvalidArgument)
        << c.field;
    EXPECT_TRUE(absl::StrContains(blocking.status().message(), c.field))
        << blocking.status();
    absl::StatusOr<Lock> async = (*engine)->Adopt("pool", token, c.options);
    EXPECT_EQ(async.status().code(), absl::StatusCode::kInvalidArgument)
        << c.field;
    EXPECT_TRUE(absl::StrContains(async.status().message(), c.field))
        << async.status();
  }
  // The resource and the token are checked as for a writer.
  EXPECT_EQ(client->Adopt("", token, PermitSet(2, {0})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->Adopt("pool", "", PermitSet(2, {0})).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A good one from the async client names what it was given.
  absl::StatusOr<Lock> good =
      (*engine)->Adopt("pool", token, PermitSet(2, {1}));
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->keys(),
            (std::vector<std::string>{SemaphoreSlotKey(Options(), "pool", 1)}));
}

}  // namespace
}  // namespace redlock
