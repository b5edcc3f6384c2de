// Copyright 2026 The redlock Authors.
//
// The blocking client on five real masters, from many threads at once.

#include "redlock/redlock.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/observer.h"
#include "tests/support/await_call.h"
#include "tests/support/redis_server.h"

namespace redlock {
namespace {

using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

class RedlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      uris_ = RedisServer::ExternalMasters();
    } else {
      auto cluster = RedisCluster::Start(5);
      ASSERT_TRUE(cluster.ok()) << cluster.status();
      cluster_ = *std::move(cluster);
      uris_ = cluster_->Uris();
    }
  }

  std::unique_ptr<Redlock> MakeClient() {
    Options options;
    options.masters = uris_;
    options.request_timeout = absl::Milliseconds(500);
    options.connect_timeout = absl::Milliseconds(500);
    options.stalled_connection_timeout = absl::Seconds(5);
    options.retry.min_delay = absl::Milliseconds(1);
    options.retry.max_delay = absl::Milliseconds(10);
    auto client = Redlock::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // The key on master 0, seen directly.
  std::optional<std::string> ValueOnFirstMaster(const std::string& key) {
    if (cluster_ == nullptr) return std::nullopt;
    auto client = cluster_->Client(0);
    EXPECT_TRUE(client.ok());
    auto value = (*client)->Get(key);
    EXPECT_TRUE(value.ok());
    return value.ok() ? *value : std::nullopt;
  }

  std::vector<std::string> uris_;
  std::unique_ptr<RedisCluster> cluster_;
};

TEST_F(RedlockTest, ManyThreadsOnOneClientNeverHoldTheLockTogether) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  constexpr int kThreads = 8;
  constexpr int kRoundsPerThread = 15;
  std::atomic<int> holders{0};
  std::atomic<int> max_holders{0};
  std::atomic<int> acquired{0};
  std::atomic<int> unexpected{0};
  std::mutex mu;
  std::string first_error;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRoundsPerThread; ++i) {
        absl::StatusOr<Lock> lock = client->Acquire("shared", absl::Seconds(10),
                                                    /*wait=*/absl::Seconds(10));
        if (!lock.ok()) {
          ++unexpected;
          std::lock_guard<std::mutex> l(mu);
          if (first_error.empty()) first_error = lock.status().ToString();
          continue;
        }
        const int now_holding = ++holders;
        int seen = max_holders.load();
        while (now_holding > seen &&
               !max_holders.compare_exchange_weak(seen, now_holding)) {
        }
        ++acquired;
        absl::SleepFor(absl::Milliseconds(1));
        --holders;
        if (!client->Release(*lock).ok()) ++unexpected;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(max_holders.load(), 1) << "two holders at once";
  EXPECT_EQ(unexpected.load(), 0) << first_error;
  EXPECT_EQ(acquired.load(), kThreads * kRoundsPerThread);
}

TEST_F(RedlockTest, HealthListsEveryMasterConnectedWithItsCounts) {
  auto client = MakeClient();
  absl::StatusOr<Lock> lock = client->TryAcquire("health", absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Every master has answered everything once the whole report is in.
  ASSERT_TRUE(client->Release(*lock, testing::WholeReport()).ok());
  const std::vector<MasterHealth> health = client->Health();
  ASSERT_EQ(health.size(), uris_.size());
  for (size_t i = 0; i < health.size(); ++i) {
    SCOPED_TRACE(health[i].master);
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uris_[i]);
    ASSERT_TRUE(address.ok());
    EXPECT_EQ(health[i].master, address->Name());  // In Options order.
    EXPECT_TRUE(health[i].connected);
    EXPECT_TRUE(health[i].last_error.ok()) << health[i].last_error;
    EXPECT_TRUE(health[i].grants_count.ok()) << health[i].grants_count;
    EXPECT_EQ(health[i].marker, "trusted");
    // The handshake, the SET and the release at least.
    EXPECT_GE(health[i].requests, 3);
    EXPECT_EQ(health[i].replies, health[i].requests);
    EXPECT_EQ(health[i].timeouts, 0);
    EXPECT_EQ(health[i].connects, 1);
    EXPECT_EQ(health[i].connection_failures, 0);
  }
}

TEST_F(RedlockTest, HealthShowsAKilledMasterDisconnectedWithTheReason) {
  if (cluster_ == nullptr) GTEST_SKIP() << "needs servers it can kill";
  auto client = MakeClient();
  ASSERT_TRUE(client->TryAcquire("health", absl::Seconds(5)).ok());
  ASSERT_TRUE(cluster_->server(0).Kill().ok());
  // The next request finds the connection gone; reconnects are refused.
  (void)client->TryAcquire("health-2", absl::Seconds(5));
  std::vector<MasterHealth> health;
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  do {
    health = client->Health();
    if (!health[0].connected && health[0].connection_failures > 0) break;
    absl::SleepFor(absl::Milliseconds(20));
  } while (absl::Now() < deadline);
  EXPECT_FALSE(health[0].connected);
  EXPECT_GT(health[0].connection_failures, 0);
  EXPECT_EQ(health[0].last_error.code(), absl::StatusCode::kUnavailable)
      << health[0].last_error;
  for (size_t i = 1; i < health.size(); ++i) {
    EXPECT_TRUE(health[i].connected) << health[i].master;
  }
}

TEST_F(RedlockTest, TryAcquireOnAHeldResourceIsAborted) {
  auto client = MakeClient();
  absl::StatusOr<Lock> held = client->TryAcquire("job", absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  absl::StatusOr<Lock> second = client->TryAcquire("job", absl::Seconds(10));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAborted)
      << second.status();
  ASSERT_TRUE(client->Release(*held).ok());
}

TEST_F(RedlockTest, AcquireWithWaitGetsTheLockOnceTheHolderReleases) {
  auto client = MakeClient();
  absl::StatusOr<Lock> held = client->TryAcquire("job", absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(300));
    EXPECT_TRUE(client->Release(*held).ok());
  });
  absl::StatusOr<Lock> waited =
      client->Acquire("job", absl::Seconds(10), absl::Seconds(5));
  releaser.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_NE(waited->token(), held->token());
  ASSERT_TRUE(client->Release(*waited).ok());
}

TEST_F(RedlockTest, WaitRunsOutWithAbortedWhileHeld) {
  auto client = MakeClient();
  absl::StatusOr<Lock> held = client->TryAcquire("job", absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  absl::StatusOr<Lock> waited =
      client->Acquire("job", absl::Seconds(10), absl::Milliseconds(300));
  EXPECT_EQ(waited.status().code(), absl::StatusCode::kAborted);
  EXPECT_NE(waited.status().message().find("attempts"), std::string::npos)
      << waited.status();
}

TEST_F(RedlockTest, ScopedLockReleasesOnScopeExit) {
  auto client = MakeClient();
  std::string token;
  {
    absl::StatusOr<ScopedLock> guard = client->AcquireScoped(
        "scoped", absl::Seconds(10), absl::ZeroDuration());
    ASSERT_TRUE(guard.ok()) << guard.status();
    token = guard->lock().token();
    if (cluster_ != nullptr) {
      absl::SleepFor(absl::Milliseconds(20));
      EXPECT_EQ(ValueOnFirstMaster("redlock:scoped"), token);
    }
    EXPECT_EQ(client->TryAcquire("scoped", absl::Seconds(10)).status().code(),
              absl::StatusCode::kAborted);
  }
  // Released at quorum speed: free for the next owner at once, and gone from
  // every master soon after.
  absl::StatusOr<Lock> again = client->TryAcquire("scoped", absl::Seconds(10));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(client->Release(*again, testing::WholeReport()).ok());
  EXPECT_EQ(ValueOnFirstMaster("redlock:scoped"), std::nullopt);
}

TEST_F(RedlockTest, AScopedLockThatOutlivesItsClientDoesNothing) {
  auto client = MakeClient();
  absl::StatusOr<ScopedLock> guard = client->AcquireScoped(
      "outlives", absl::Seconds(10), absl::ZeroDuration());
  ASSERT_TRUE(guard.ok()) << guard.status();
  const std::string token = guard->lock().token();
  client.reset();
  // No client to release through: the lock is left to expire, as any lock
  // still held when its client goes.
  absl::StatusOr<ReleaseReport> report = guard->Release();
  EXPECT_EQ(report.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(report.status().message().find("client destroyed"),
            std::string::npos)
      << report.status();
  if (cluster_ != nullptr) {
    EXPECT_EQ(ValueOnFirstMaster("redlock:outlives"), token);
  }
  // And the destructor, at the end of the test, does nothing either (the
  // sanitizer runs would see a use after free).
}

TEST_F(RedlockTest, AcquireScopedWithOptionsCarriesAFencingToken) {
  auto client = MakeClient();
  AcquireOptions options;
  options.ttl = absl::Seconds(10);
  options.fencing = true;
  uint64_t first = 0;
  {
    absl::StatusOr<ScopedLock> guard = client->AcquireScoped("fenced", options);
    ASSERT_TRUE(guard.ok()) << guard.status();
    first = guard->lock().fence();
    EXPECT_GT(first, 0u);
  }
  absl::StatusOr<ScopedLock> again = client->AcquireScoped("fenced", options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_GT(again->lock().fence(), first);
}

TEST_F(RedlockTest, AcquireOptionsWithoutATtlUseTheDefault) {
  auto client = MakeClient();
  AcquireOptions options;  // ttl = 0
  absl::StatusOr<Lock> lock = client->Acquire("default-ttl", options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_GT(lock->remaining(), client->options().default_ttl / 2);
  EXPECT_LE(lock->remaining(), client->options().default_ttl);
  ASSERT_TRUE(client->Release(*lock).ok());
}

TEST_F(RedlockTest, ABlockedAcquireIsCancelledFromAnotherThread) {
  auto client = MakeClient();
  absl::StatusOr<Lock> held = client->TryAcquire("cancel", absl::Seconds(30));
  ASSERT_TRUE(held.ok()) << held.status();
  AcquireOptions options;
  options.ttl = absl::Seconds(10);
  options.wait = absl::Seconds(60);
  std::optional<absl::StatusOr<Lock>> waited;
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    waited.emplace(client->Acquire("cancel", options));
    returned = true;
  });
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_FALSE(returned.load());
  const absl::Time start = absl::Now();
  options.cancel.Cancel();
  waiter.join();
  // Generous: the wait had a minute to go.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(waited->status().code(), absl::StatusCode::kCancelled)
      << waited->status();
  EXPECT_NE(waited->status().message().find("cancelled by the caller"),
            std::string::npos)
      << waited->status();
  // The client is still usable, and the holder still holds.
  EXPECT_TRUE(client->Extend(*held, absl::Seconds(30)).ok());
  // A call given a cancelled Cancellation ends at once.
  EXPECT_EQ(client->Acquire("cancel-2", options).status().code(),
            absl::StatusCode::kCancelled);
  ASSERT_TRUE(client->Release(*held).ok());
}

TEST_F(RedlockTest, AnAdoptedTokenIsExtendedAndReleasedByAnotherClient) {
  auto acquirer = MakeClient();
  AcquireOptions options;
  options.ttl = absl::Seconds(10);
  options.fencing = true;
  absl::StatusOr<Lock> original = acquirer->Acquire("handed-over", options);
  ASSERT_TRUE(original.ok()) << original.status();

  auto worker = MakeClient();
  absl::StatusOr<Lock> adopted =
      worker->Adopt("handed-over", original->token(), original->fence());
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_TRUE(adopted->adopted());
  EXPECT_FALSE(original->adopted());
  EXPECT_EQ(adopted->key(), original->key());
  EXPECT_EQ(adopted->fence(), original->fence());
  // Nothing is known of its validity until an extension succeeds.
  EXPECT_FALSE(adopted->valid());
  EXPECT_EQ(adopted->remaining(), absl::ZeroDuration());
  ASSERT_TRUE(worker->Extend(*adopted, absl::Seconds(20)).ok());
  EXPECT_TRUE(adopted->valid());
  EXPECT_GT(adopted->remaining(), absl::Seconds(15));

  absl::StatusOr<ReleaseReport> report = worker->Release(*adopted);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->freed);
  EXPECT_GE(report->released, 3);
  absl::StatusOr<Lock> next =
      acquirer->TryAcquire("handed-over", absl::Seconds(5));
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE(acquirer->Release(*next).ok());
}

TEST_F(RedlockTest, AnAdoptedWrongTokenNeitherExtendsNorReleasesTheOwnersLock) {
  auto owner = MakeClient();
  absl::StatusOr<Lock> held = owner->TryAcquire("not-yours", absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto other = MakeClient();
  absl::StatusOr<Lock> stale =
      other->Adopt("not-yours", "0123456789abcdef0123456789abcdef");
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(other->Extend(*stale, absl::Seconds(10)).code(),
            absl::StatusCode::kAborted);
  EXPECT_FALSE(stale->valid());
  absl::StatusOr<ReleaseReport> report =
      other->Release(*stale, testing::WholeReport());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 0);
  EXPECT_EQ(report->not_held, static_cast<int>(uris_.size()));
  EXPECT_TRUE(owner->Extend(*held, absl::Seconds(10)).ok());
  ASSERT_TRUE(owner->Release(*held).ok());
}

TEST_F(RedlockTest, AdoptNamesWhatIsWrongWithTheTokenOrResource) {
  auto client = MakeClient();
  struct Case {
    std::string resource;
    std::string token;
    std::string expected;
  } cases[] = {
      {"r", "", "token is empty"},
      {"r", "abc def", "not printable ASCII (or is a space) at offset 3"},
      {"r", std::string(300, 'a'), "token is 300 bytes; at most 256"},
      {"", "abc", "resource name must not be empty"},
      {"__x", "abc", "reserved"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Lock> lock = client->Adopt(c.resource, c.token);
    EXPECT_EQ(lock.status().code(), absl::StatusCode::kInvalidArgument)
        << c.expected;
    EXPECT_NE(lock.status().message().find(c.expected), std::string::npos)
        << lock.status();
  }
}

TEST_F(RedlockTest, ScopedLockReleasedByHandIsNotReleasedTwice) {
  auto client = MakeClient();
  absl::StatusOr<ScopedLock> guard =
      client->AcquireScoped("scoped2", absl::Seconds(10), absl::ZeroDuration());
  ASSERT_TRUE(guard.ok());
  absl::StatusOr<ReleaseReport> report = guard->Release(testing::WholeReport());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->released, 5);
  EXPECT_EQ(guard->Release().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(RedlockTest, ExtendThroughOneCopyIsSeenByAll) {
  auto client = MakeClient();
  absl::StatusOr<Lock> lock = client->TryAcquire("ext", absl::Seconds(2));
  ASSERT_TRUE(lock.ok());
  Lock copy = *lock;
  const MonotonicTime before = copy.valid_until();
  ASSERT_TRUE(client->Extend(*lock, absl::Seconds(30)).ok());
  EXPECT_GT(copy.valid_until(), before + std::chrono::seconds(20));
  ASSERT_TRUE(client->Release(copy).ok());
  EXPECT_TRUE(lock->released());
}

TEST_F(RedlockTest, DistinctResourcesFromManyThreadsAllSucceed) {
  auto client = MakeClient();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto lock = client->TryAcquire(
            "r-" + std::to_string(t) + "-" + std::to_string(i),
            absl::Seconds(10));
        if (lock.ok() && client->Release(*lock).ok()) ++ok;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
}

// A caller turns the client's loop itself, so the client's callbacks can run
// on the caller's own thread; a blocking call made from one must still be
// refused rather than wait for itself.
TEST_F(RedlockTest, ABlockingCallFromAnObserverOnTheCallersTurnIsRefused) {
  class CallsBack : public Observer {
   public:
    void OnAcquired(const AcquiredEvent&) override {
      if (client == nullptr || called.exchange(true)) return;
      caller_thread = std::this_thread::get_id();
      nested = client->TryAcquire("nested-from-observer", absl::Seconds(5))
                   .status();
    }
    Redlock* client = nullptr;
    std::atomic<bool> called{false};
    std::thread::id caller_thread;
    absl::Status nested;
  };
  auto observer = std::make_shared<CallsBack>();
  Options options;
  options.masters = uris_;
  options.request_timeout = absl::Milliseconds(500);
  options.observer = observer;
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  observer->client = client->get();
  auto lock = (*client)->TryAcquire("observed", absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(observer->called.load());
  EXPECT_EQ(observer->nested.code(), absl::StatusCode::kFailedPrecondition)
      << observer->nested;
  EXPECT_TRUE((*client)->Release(*lock).ok());
}

TEST(RedlockCreateTest, RejectsBadOptionsWithAClearError) {
  Options options;
  auto client = Redlock::Create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  options.masters = {"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"};
  EXPECT_EQ(Redlock::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.masters = {"redis://no-such-host.invalid:6379"};
  EXPECT_EQ(Redlock::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RedlockCreateTest, ResolvesLocalhostAndReportsDownMastersAtAcquire) {
  Options options;
  // Nothing listens on port 1: Create succeeds, the acquisition fails.
  options.masters = {"redis://localhost:1"};
  options.request_timeout = absl::Milliseconds(200);
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Lock> lock = (*client)->TryAcquire("x", absl::Seconds(1));
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(lock.status().message().find("127.0.0.1:1"), std::string::npos)
      << lock.status();
}

}  // namespace
}  // namespace redlock
