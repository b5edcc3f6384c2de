// Copyright 2026 The redlock Authors.
//
// Fencing tokens across the quorum, on real masters: for one resource, a
// grant that started after another completed carries a larger token — also
// while a minority is down, and when masters come back empty. Where that
// cannot be guaranteed, no token is issued at all.
//
// Fencing logic that needs seconds of waiting (the deployment ageing past
// INFO's uptime resolution, reborn masters held back for max_ttl, a slow
// link) is tested on simulated time in tests/sim/sim_guard_test.cc
// (SimFencingTest: the operator's counter raise after a majority restarted
// empty, a young reborn master's counter, a write-back that finds its token
// already written, and the empty-intersection scene below). That scene stays
// here too, on real redis-server processes, as proof that the simulated
// masters and network behave like the real ones.

#include "redlock/fencing.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/keys.h"
#include "redlock/observer.h"
#include "redlock/redlock.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/guard_expectations.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::Fenced;
using ::redlock::testing::RedisClient;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kResource[] = "ledger";

class FencingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can stop and restart";
    }
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  std::unique_ptr<Redlock> MakeClient(bool guard = true) {
    Options options = TestOptions(cluster_->Uris());
    options.restart_guard = guard;
    options.max_ttl = absl::Seconds(10);
    options.default_ttl = absl::Seconds(5);
    auto client = Redlock::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // The fencing counter on master i, or -1 if absent.
  int64_t Counter(int i) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    auto value = (*client)->Get(FenceCounterKey(Options(), kResource));
    EXPECT_TRUE(value.ok()) << value.status();
    int64_t n = -1;
    if (value.ok() && value->has_value()) {
      EXPECT_TRUE(absl::SimpleAtoi(**value, &n));
    }
    return n;
  }

  // A client that reaches every master through its own fault proxy (in
  // proxies_), with the request timeout given, and has marked the deployment.
  std::unique_ptr<Redlock> MakeClientThroughProxies(
      absl::Duration request_timeout) {
    std::vector<std::string> uris;
    for (int i = 0; i < cluster_->size(); ++i) {
      auto proxy =
          FaultProxy::Start({.upstream_port = cluster_->server(i).port()});
      EXPECT_TRUE(proxy.ok()) << proxy.status();
      if (!proxy.ok()) return nullptr;
      uris.push_back((*proxy)->Uri());
      proxies_.push_back(*std::move(proxy));
    }
    Options options = TestOptions(uris);
    options.request_timeout = request_timeout;
    options.connect_timeout = absl::Seconds(2);
    options.stalled_connection_timeout = absl::Seconds(5);
    auto client = Redlock::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return nullptr;
    EXPECT_TRUE((*client)->Acquire("warmup", Fenced()).ok());
    return *std::move(client);
  }

  // Adds `latency` each way on every proxy.
  void SlowDownEveryMaster(absl::Duration latency) {
    for (auto& proxy : proxies_) proxy->SetLatency(latency, latency);
  }

  std::unique_ptr<RedisCluster> cluster_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
};

// Raises every counter when the fenced acquire round has been decided,
// before the write-back: as if another acquisition wrote a higher token in
// between.
class RaiseCountersAfterTheRead : public Observer {
 public:
  explicit RaiseCountersAfterTheRead(const RedisCluster* cluster)
      : cluster_(cluster) {}
  void OnAttempt(const AttemptEvent& event) override {
    if (!event.outcome.ok()) return;
    for (int i = 0; i < cluster_->size(); ++i) {
      auto client = cluster_->Client(i);
      if (!client.ok()) continue;
      (void)(*client)->Command(
          {"SET", FenceCounterKey(Options(), kResource), "1000"});
    }
  }

 private:
  const RedisCluster* const cluster_;
};

// Every master refuses the write-back, each holding the lock key the round
// set: the failed acquisition must release it on every one of them, the
// masters that refused included.
TEST_F(FencingTest, AWriteBackEveryMasterRefusedLeavesNoLockKey) {
  Options options = TestOptions(cluster_->Uris());
  options.observer =
      std::make_shared<RaiseCountersAfterTheRead>(cluster_.get());
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Lock> lock = (*client)->Acquire(kResource, Fenced());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  // The release was sent behind the write-back on every connection before
  // the result was delivered; give the masters a moment to run it (the TTL,
  // 5s, is far longer).
  for (int i = 0; i < cluster_->size(); ++i) {
    auto reader = cluster_->Client(i);
    ASSERT_TRUE(reader.ok());
    bool held = true;
    for (int tries = 0; held && tries < 200; ++tries) {
      auto value = (*reader)->Get(LockKey(Options(), kResource));
      ASSERT_TRUE(value.ok());
      held = value->has_value();
      if (held) absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_FALSE(held) << "master " << i << " kept the lock key";
    EXPECT_EQ(Counter(i), 1000);
  }
}

TEST_F(FencingTest, TheFirstTokenIsOneAndIsWrittenToTheMasters) {
  auto client = MakeClient();
  absl::StatusOr<Lock> lock = client->Acquire(kResource, Fenced());
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(lock->fence(), 1u);
  absl::SleepFor(absl::Milliseconds(50));
  int written = 0;
  for (int i = 0; i < 5; ++i) written += Counter(i) == 1;
  EXPECT_GE(written, 3);
  // Without fencing, no token.
  ASSERT_TRUE(client->Release(*lock).ok());
  absl::StatusOr<Lock> plain = client->TryAcquire(kResource, absl::Seconds(5));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->fence(), 0u);
}

TEST_F(FencingTest, TokensStrictlyIncreaseAcrossClients) {
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(MakeClient());
  uint64_t last = 0;
  for (int round = 0; round < 15; ++round) {
    Redlock& client = *clients[round % clients.size()];
    absl::StatusOr<Lock> lock = client.Acquire(kResource, Fenced());
    ASSERT_TRUE(lock.ok()) << lock.status();
    EXPECT_GT(lock->fence(), last) << "round " << round;
    last = lock->fence();
    ASSERT_TRUE(client.Release(*lock).ok());
  }
}

TEST_F(FencingTest, TokensKeepIncreasingWhileAMinorityIsDownAndAfterItReturns) {
  auto client = MakeClient();
  uint64_t last = 0;
  auto next = [&](const char* when) {
    absl::StatusOr<Lock> lock = client->Acquire(kResource, Fenced());
    ASSERT_TRUE(lock.ok()) << when << ": " << lock.status();
    EXPECT_GT(lock->fence(), last) << when;
    last = lock->fence();
    ASSERT_TRUE(client->Release(*lock).ok());
  };
  next("all up");
  next("all up");
  ASSERT_TRUE(cluster_->server(0).Kill().ok());
  ASSERT_TRUE(cluster_->server(3).Kill().ok());
  next("two down");
  next("two down");
  // They come back empty (no persistence): counters gone, marked reborn.
  ASSERT_TRUE(cluster_->server(0).Restart().ok());
  ASSERT_TRUE(cluster_->server(3).Restart().ok());
  next("two back empty");
  next("two back empty");
}

// The issue's adversarial case: A's token was written to {0,1,2}; master 2
// comes back empty; 0 and 1 are paused, so B reaches only {2,3,4}. A naive
// "max over the granting quorum" would hand B a token no larger than A's.
TEST_F(FencingTest, AnEmptyIntersectionMasterGivesALargerTokenOrARefusal) {
  for (bool guard : {true, false}) {
    SCOPED_TRACE(guard ? "restart guard on" : "restart guard off");
    // Fresh masters for each variant.
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto a = MakeClient(guard);
    ASSERT_TRUE(a->Acquire("warmup", Fenced()).ok());  // Marks every master.
    // Let the deployment age past the resolution of Redis's uptime, so that
    // the restarts below are told from a late first marking.
    absl::SleepFor(absl::Milliseconds(2200));
    for (int i : {3, 4}) ASSERT_TRUE(cluster_->server(i).Stop().ok());
    absl::StatusOr<Lock> first = a->Acquire(kResource, Fenced());
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(a->Release(*first).ok());
    // The write-back queued on 3 and 4 must not reach them: they restart
    // empty-handed for the counter (a kill loses what they had buffered).
    for (int i : {3, 4}) {
      ASSERT_TRUE(cluster_->server(i).Kill().ok());
      ASSERT_TRUE(cluster_->server(i).Restart().ok());
    }
    for (int i : {3, 4}) {
      // Restarted empty, but before any client decides they are reborn the
      // test puts the marker back as if they had never lost anything: the
      // worst case for the intersection argument is that 3 and 4 are trusted
      // and simply never saw A's token.
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok());
      ASSERT_TRUE(testing::OperatorMarkTrusted(**client).ok());
    }
    ASSERT_EQ(Counter(3), -1);
    ASSERT_EQ(Counter(4), -1);
    // Master 2, in A's write quorum, comes back empty.
    ASSERT_TRUE(cluster_->server(2).Restart().ok());
    ASSERT_EQ(Counter(2), -1);
    for (int i : {0, 1}) ASSERT_TRUE(cluster_->server(i).Stop().ok());
    auto b = MakeClient(guard);
    absl::StatusOr<Lock> second = b->Acquire(kResource, Fenced());
    if (second.ok()) {
      EXPECT_GT(second->fence(), first->fence());
    } else {
      EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
          << second.status();
    }
    if (!second.ok() && !guard) {
      // Refused by the fencing rule — or before it, while the hand-marked
      // masters' membership records (which their marks dropped) are still
      // being written back: both refusals, neither a token.
      EXPECT_TRUE(second.status().message().find("fencing unavailable") !=
                      std::string::npos ||
                  second.status().message().find(
                      "membership: not yet judged (no membership record") !=
                      std::string::npos)
          << second.status();
    }
    for (int i : {0, 1}) ASSERT_TRUE(cluster_->server(i).Continue().ok());
    // With 0 and 1 back, B reads A's token from them and goes past it.
    absl::StatusOr<Lock> third = b->Acquire(kResource, Fenced());
    ASSERT_TRUE(third.ok()) << third.status();
    EXPECT_GT(third->fence(), first->fence());
  }
}

TEST_F(FencingTest, RandomMinorityRestartsNeverIssueASmallerToken) {
  // A resource guarded by the fenced write, on a server of its own.
  auto resource = RedisServer::Start({});
  ASSERT_TRUE(resource.ok()) << resource.status();
  auto store = (*resource)->Client();
  ASSERT_TRUE(store.ok());
  std::mt19937 random(20261130);  // Test scheduling only, never tokens.
  uint64_t highest = 0;
  int issued = 0;
  {
    // The deployment is marked, then ages past INFO's uptime resolution: a
    // master restarted earlier cannot be told from one marked late, and is
    // left unjudged (its counter untrusted) until the deployment is 3s old.
    auto client = MakeClient(/*guard=*/false);
    absl::StatusOr<Lock> lock = client->Acquire(kResource, Fenced());
    ASSERT_TRUE(lock.ok()) << lock.status();
    highest = lock->fence();
    ASSERT_TRUE(client->Release(*lock).ok());
    absl::SleepFor(absl::Milliseconds(2200));
  }
  for (int round = 0; round < 12; ++round) {
    // A random minority (1 or 2 masters) restarts without its data.
    std::vector<int> order = {0, 1, 2, 3, 4};
    std::shuffle(order.begin(), order.end(), random);
    const int victims = 1 + static_cast<int>(random() % 2);
    for (int v = 0; v < victims; ++v) {
      ASSERT_TRUE(cluster_->server(order[v]).Restart().ok());
    }
    // A different client each time, as different processes would be.
    auto client = MakeClient(/*guard=*/false);
    absl::StatusOr<Lock> lock = client->Acquire(kResource, Fenced());
    if (!lock.ok()) {
      EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
          << lock.status();
      std::cerr << "refused: " << lock.status() << "\n";
      continue;
    }
    ++issued;
    EXPECT_GT(lock->fence(), highest) << "round " << round;
    // The fenced resource accepts it...
    auto write = (*store)->Command(
        FencedSetArgv("ledger:fence", "ledger:data", lock->fence(), "round"));
    ASSERT_TRUE(write.ok());
    EXPECT_EQ(write->integer, 1) << write->DebugString();
    // ...and from then on refuses anything older.
    if (highest > 0) {
      auto stale = (*store)->Command(
          FencedSetArgv("ledger:fence", "ledger:data", highest, "stale"));
      ASSERT_TRUE(stale.ok());
      EXPECT_EQ(stale->integer, 0) << stale->DebugString();
    }
    highest = std::max(highest, lock->fence());
    ASSERT_TRUE(client->Release(*lock).ok());
  }
  // Refusals are allowed; a run where nothing was issued proves nothing.
  EXPECT_GE(issued, 6);
  auto data = (*store)->Get("ledger:data");
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, "round");
}

// The write-back counts inside the validity time: a fenced acquisition whose
// write-back returns after validity ran out is not a grant (the lock may
// already belong to someone else), and it releases what it set.
TEST_F(FencingTest, AWriteBackThatOutlastsValidityIsNotAGrant) {
  std::unique_ptr<Redlock> client =
      MakeClientThroughProxies(absl::Milliseconds(900));
  ASSERT_NE(client, nullptr);
  // Each round trip takes 600ms: quorum at ~600ms of a 1s TTL leaves
  // ~380ms, and the write-back takes another 600ms.
  SlowDownEveryMaster(absl::Milliseconds(300));
  AcquireOptions once = Fenced(absl::Seconds(1));
  once.wait = absl::ZeroDuration();
  absl::StatusOr<Lock> lock = client->Acquire(kResource, once);
  ASSERT_FALSE(lock.ok()) << "granted with " << lock->remaining() << " left";
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kDeadlineExceeded)
      << lock.status();
  EXPECT_NE(lock.status().message().find("writing the fencing token"),
            std::string::npos)
      << lock.status();
}

TEST(FencedSetTest, RejectsATokenLowerThanTheHighestSeen) {
  if (RedisServer::UsingExternalMasters()) GTEST_SKIP();
  auto server = RedisServer::Start({});
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = (*server)->Client();
  ASSERT_TRUE(client.ok());
  auto run = [&](uint64_t token, const std::string& value) {
    auto reply = (*client)->Command(FencedSetArgv("f", "d", token, value));
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply->integer : -1;
  };
  EXPECT_EQ(run(34, "from B"), 1);
  EXPECT_EQ(run(33, "from A, stale"), 0);
  EXPECT_EQ(*(*client)->Get("d"), "from B");
  EXPECT_EQ(run(34, "from B again"), 1);  // The same holder may write again.
  EXPECT_EQ(run(35, "from C"), 1);
  EXPECT_EQ(*(*client)->Get("f"), "35");
}

}  // namespace
}  // namespace redlock
