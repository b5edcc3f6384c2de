// Copyright 2026 The redlock Authors.
//
// Fencing tokens across the quorum, on real masters: for one resource, a
// grant that started after another completed carries a larger token — also
// while a minority is down, and when masters come back empty. Where that
// cannot be guaranteed, no token is issued at all.

#include "redlock/fencing.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::RedisClient;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kResource[] = "ledger";

AcquireOptions Fenced(absl::Duration ttl = absl::Seconds(5)) {
  AcquireOptions options;
  options.ttl = ttl;
  options.fencing = true;
  return options;
}

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
      ASSERT_TRUE(
          (*client)
              ->Command({"SET", DeploymentMarkerKey(Options()), "trusted"})
              .ok());
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
      EXPECT_NE(second.status().message().find("fencing unavailable"),
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

// The recovery in docs/lifetime-and-fencing.md, as an operator would run it
// with redis-cli: raise the counter on every master to a floor no issued
// token exceeds (raise-only, so a master that is ahead keeps its value).
constexpr char kRaiseCounterLua[] =
    "local c = tonumber(redis.call('get', KEYS[1]) or '0') "
    "if c < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]) end "
    "return redis.call('get', KEYS[1])";

TEST_F(FencingTest,
       AfterAMajorityRestartedEmptyOnlyAnOperatorRaiseRestoresFencing) {
  Options options = TestOptions(cluster_->Uris());
  options.max_ttl = absl::Seconds(2);
  options.default_ttl = absl::Seconds(1);
  auto created = Redlock::Create(options);
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<Redlock> a = *std::move(created);
  ASSERT_TRUE(a->Acquire("warmup", Fenced(absl::Seconds(1))).ok());
  absl::SleepFor(absl::Milliseconds(2200));  // Past uptime's resolution.
  absl::StatusOr<Lock> first = a->Acquire(kResource, Fenced(absl::Seconds(1)));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(a->Release(*first).ok());

  // A majority loses everything, counters included.
  for (int i : {0, 1, 2}) ASSERT_TRUE(cluster_->server(i).Restart().ok());
  // Past max_ttl, the reborn masters' grants count again; their counters do
  // not come back by themselves.
  absl::SleepFor(absl::Milliseconds(2500));
  AcquireOptions no_wait = Fenced(absl::Seconds(1));
  no_wait.wait = absl::ZeroDuration();
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<Lock> refused = a->Acquire(kResource, no_wait);
    ASSERT_FALSE(refused.ok()) << "fence " << refused->fence();
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_NE(refused.status().message().find("fencing unavailable"),
              std::string::npos)
        << refused.status();
  }
  // A plain acquisition still works: only fencing is refused.
  absl::StatusOr<Lock> plain = a->TryAcquire(kResource, absl::Seconds(1));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(a->Release(*plain).ok());

  // The operator raises every counter to 1000, e.g. the highest token the
  // resource accepted rounded up, with the documented EVAL.
  const std::string key = FenceCounterKey(Options(), kResource);
  for (int i = 0; i < 5; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    auto raised =
        (*client)->Command({"EVAL", kRaiseCounterLua, "1", key, "1000"});
    ASSERT_TRUE(raised.ok()) << raised.status();
    EXPECT_EQ(raised->str, "1000") << raised->DebugString();
  }
  absl::StatusOr<Lock> after = a->Acquire(kResource, no_wait);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->fence(), 1001u);
  // Raise-only: a floor below the counter changes nothing.
  auto client = cluster_->Client(0);
  ASSERT_TRUE(client.ok());
  auto lower = (*client)->Command({"EVAL", kRaiseCounterLua, "1", key, "5"});
  ASSERT_TRUE(lower.ok());
  int64_t now = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lower->str, &now)) << lower->DebugString();
  EXPECT_GE(now, 1000);  // 1001 once the write-back reached master 0.
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

// A reborn master's counter counts only under the grant rule: one that has
// been up for less than max_ttl is not judged, whatever counter it holds (a
// write-back that reached it after its restart can be older than tokens it
// forgot). Here the highest token, 10, lives only on master 2, which is
// stopped; master 4 came back empty moments ago and was handed a stale 3.
// Counting master 4's read would complete a quorum of reads that misses 10
// and issue 4.
TEST_F(FencingTest, AYoungRebornMastersCounterDoesNotCompleteTheReadQuorum) {
  Options options = TestOptions(cluster_->Uris());
  options.max_ttl = absl::Seconds(4);
  options.default_ttl = absl::Seconds(2);
  auto created = Redlock::Create(options);
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<Redlock> a = *std::move(created);
  ASSERT_TRUE(a->Acquire("warmup", Fenced(absl::Seconds(1))).ok());
  absl::SleepFor(absl::Milliseconds(2200));  // Past uptime's resolution.
  // Master 3 lost its data long enough ago that its grants count again.
  ASSERT_TRUE(cluster_->server(3).Restart().ok());
  absl::SleepFor(absl::Milliseconds(4500));
  // Master 4 lost its data just now.
  ASSERT_TRUE(cluster_->server(4).Restart().ok());
  // A reconnects to it and marks it reborn.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline &&
         !(a->Health()[4].connected && a->Health()[4].marker == "reborn")) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const std::vector<MasterHealth> health = a->Health();
  ASSERT_EQ(health[3].marker, "reborn");
  ASSERT_TRUE(health[3].grants_count.ok()) << health[3].grants_count;
  ASSERT_EQ(health[4].marker, "reborn");
  ASSERT_FALSE(health[4].grants_count.ok());

  const std::string counter = FenceCounterKey(Options(), kResource);
  const std::string lock = LockKey(Options(), kResource);
  auto set = [&](int i, std::vector<std::string> argv) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE((*client)->Command(std::move(argv)).ok());
  };
  set(0, {"SET", counter, "3"});
  set(1, {"SET", counter, "3"});
  set(2, {"SET", counter, "10"});
  set(4, {"SET", counter, "3"});
  set(4, {"SET", lock, "someone-else", "PX", "30000"});  // 4 denies.
  ASSERT_TRUE(cluster_->server(2).Stop().ok());

  AcquireOptions once = Fenced(absl::Seconds(2));
  once.wait = absl::ZeroDuration();
  absl::StatusOr<Lock> b = a->Acquire(kResource, once);
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  if (b.ok()) {
    EXPECT_GT(b->fence(), 10u) << "a token below one already issued";
  } else {
    EXPECT_EQ(b.status().code(), absl::StatusCode::kUnavailable) << b.status();
    EXPECT_NE(b.status().message().find("fencing unavailable"),
              std::string::npos)
        << b.status();
  }
}

// Two acquisitions must never issue the same token. A holder whose
// write-back finds the counter already at its token (another acquisition
// wrote it after our read, as when our process paused between the two) is
// refused; with a long TTL no validity check would catch it.
TEST_F(FencingTest, AWriteBackThatFindsItsTokenAlreadyWrittenIsRefused) {
  std::unique_ptr<Redlock> x = MakeClientThroughProxies(absl::Seconds(2));
  ASSERT_NE(x, nullptr);
  const std::string counter = FenceCounterKey(Options(), kResource);
  for (int i = 0; i < 5; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SET", counter, "5"}).ok());
  }
  // Every request takes 300ms to reach a master and 300ms to come back: X's
  // reads run at about 300ms, its write-back of 6 arrives at about 900ms.
  SlowDownEveryMaster(absl::Milliseconds(300));
  AcquireOptions once = Fenced(absl::Seconds(30));
  once.wait = absl::ZeroDuration();
  absl::StatusOr<Lock> got;
  std::thread acquiring([&] { got = x->Acquire(kResource, once); });
  // In between, another acquisition's write-back of 6 lands everywhere.
  absl::SleepFor(absl::Milliseconds(600));
  for (int i = 0; i < 5; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SET", counter, "6"}).ok());
  }
  acquiring.join();
  if (got.ok()) {
    EXPECT_GT(got->fence(), 6u) << "token 6 issued twice";
  } else {
    EXPECT_EQ(got.status().code(), absl::StatusCode::kAborted) << got.status();
    EXPECT_NE(got.status().message().find("already at or above"),
              std::string::npos)
        << got.status();
  }
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
