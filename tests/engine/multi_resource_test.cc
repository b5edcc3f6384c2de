// Copyright 2026 The redlock Authors.
//
// Locks on several resources at once, on real masters: all or none on every
// master, one vote per master for the whole set, extension, keep-alive,
// fencing and release on the set, and no deadlock or overlap between clients
// taking overlapping sets in opposite orders.

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "tests/support/await_call.h"
#include "tests/support/own_masters_test.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

class MultiResourceTest : public testing::OwnMastersTest {
 protected:
  // The value of `resource`'s key on master `i`.
  std::optional<std::string> Value(int i, const std::string& resource) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok());
    auto value = (*client)->Get(LockKey(Options(), resource));
    EXPECT_TRUE(value.ok());
    return value.ok() ? *value : std::nullopt;
  }
  int64_t Pttl(int i, const std::string& resource) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok());
    auto reply = (*client)->Command({"PTTL", LockKey(Options(), resource)});
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply->integer : -3;
  }
  // Masters where any of `resources` has a key.
  int MastersHoldingAny(const std::vector<std::string>& resources) {
    int n = 0;
    for (int i = 0; i < 3; ++i) {
      bool any = false;
      for (const std::string& r : resources) any |= Value(i, r).has_value();
      n += any;
    }
    return n;
  }

  static AcquireOptions Ttl(absl::Duration ttl,
                            absl::Duration wait = absl::ZeroDuration()) {
    AcquireOptions options;
    options.ttl = ttl;
    options.wait = wait;
    return options;
  }
};

TEST_F(MultiResourceTest, ASetIsTakenOnEveryMasterAsOneAndReleasedAsOne) {
  auto client = MakeClient();
  absl::StatusOr<Lock> lock = client->Acquire(
      {"stock:7", "orders:42", "stock:7"}, Ttl(absl::Seconds(10)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Sorted, duplicates dropped; resource() is the first.
  EXPECT_EQ(lock->resources(),
            (std::vector<std::string>{"orders:42", "stock:7"}));
  EXPECT_EQ(lock->resource(), "orders:42");
  EXPECT_EQ(lock->keys().size(), 2u);
  ASSERT_TRUE(client->Release(*lock, testing::WholeReport()).ok());
  EXPECT_EQ(MastersHoldingAny({"orders:42", "stock:7"}), 0);
}

TEST_F(MultiResourceTest, OneHeldResourceRefusesTheWholeSetAndSetsNothing) {
  auto a = MakeClient();
  auto b = MakeClient();
  absl::StatusOr<Lock> held = a->TryAcquire("b", absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  absl::StatusOr<Lock> set =
      b->Acquire({"a", "b", "c"}, Ttl(absl::Seconds(10)));
  EXPECT_EQ(set.status().code(), absl::StatusCode::kAborted) << set.status();
  // All or none on every master: a and c were not set anywhere, not even
  // for a moment that a release had to undo. `b` is held at quorum: the
  // acquisition returns when two masters granted it, and the third may not
  // have been reached yet (its handshake still under way; seen once).
  auto expect_only_b_held = [&] {
    int holding_b = 0;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(Value(i, "a"), std::nullopt) << i;
      EXPECT_EQ(Value(i, "c"), std::nullopt) << i;
      if (Value(i, "b") == held->token()) ++holding_b;
    }
    EXPECT_GE(holding_b, 2);
  };
  expect_only_b_held();
  // The same with fencing (another script): refused, nothing set.
  AcquireOptions fenced = Ttl(absl::Seconds(10));
  fenced.fencing = true;
  absl::StatusOr<Lock> fenced_set = b->Acquire({"a", "b", "c"}, fenced);
  EXPECT_EQ(fenced_set.status().code(), absl::StatusCode::kAborted)
      << fenced_set.status();
  expect_only_b_held();
  // Nor is a single one of them held back by the refused sets.
  absl::StatusOr<Lock> just_a = b->TryAcquire("a", absl::Seconds(10));
  EXPECT_TRUE(just_a.ok()) << just_a.status();
}

TEST_F(MultiResourceTest, ExtendingASetExtendsEveryKeyOrNone) {
  auto client = MakeClient();
  absl::StatusOr<Lock> lock =
      client->Acquire({"x", "y"}, Ttl(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Extend(*lock, absl::Seconds(60)).ok());
  absl::SleepFor(absl::Milliseconds(50));  // Let every master apply it.
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(Pttl(i, "x"), 50'000) << i;
    EXPECT_GT(Pttl(i, "y"), 50'000) << i;
  }
  // A set that lost one key on every master is lost, and its other key is
  // not extended.
  for (int i = 0; i < 3; ++i) {
    auto c = cluster_->Client(i);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->Command({"DEL", LockKey(Options(), "y")}).ok());
  }
  EXPECT_EQ(client->Extend(*lock, absl::Seconds(120)).code(),
            absl::StatusCode::kAborted);
  for (int i = 0; i < 3; ++i) EXPECT_LT(Pttl(i, "x"), 61'000) << i;
}

TEST_F(MultiResourceTest,
       ASetsFencingTokenIsLargerThanEveryEarlierTokenOfEach) {
  auto client = MakeClient();
  AcquireOptions fenced = Ttl(absl::Seconds(10));
  fenced.fencing = true;
  uint64_t highest = 0;
  for (const char* r : {"ledger", "audit", "audit", "audit"}) {
    absl::StatusOr<Lock> one = client->Acquire(r, fenced);
    ASSERT_TRUE(one.ok()) << one.status();
    highest = std::max(highest, one->fence());
    ASSERT_TRUE(client->Release(*one).ok());
  }
  absl::StatusOr<Lock> set = client->Acquire({"ledger", "audit"}, fenced);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_GT(set->fence(), highest);
  const uint64_t set_fence = set->fence();
  ASSERT_TRUE(client->Release(*set).ok());
  // Each resource's counter was raised to the set's token: the next token of
  // either is larger.
  for (const char* r : {"ledger", "audit"}) {
    absl::StatusOr<Lock> after = client->Acquire(r, fenced);
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_GT(after->fence(), set_fence) << r;
    ASSERT_TRUE(client->Release(*after).ok());
  }
}

TEST_F(MultiResourceTest, ASetIsKeptAliveWhileTheWorkRuns) {
  auto client = MakeClient();
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(100);
  hold.safety_margin = absl::Milliseconds(200);
  absl::Status result = client->WithLock(
      {"p", "q"}, Ttl(absl::Seconds(1)),
      [&](const Lock& lock) {
        absl::SleepFor(absl::Milliseconds(2000));  // Two TTLs.
        EXPECT_FALSE(lock.lost()) << lock.lost_reason();
        EXPECT_TRUE(lock.valid());
        // Every key of the set is still ours on every master: each one was
        // extended, not only the first.
        for (const std::string& r : lock.resources()) {
          for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(Value(i, r), lock.token()) << r << " on master " << i;
          }
        }
        return absl::OkStatus();
      },
      std::move(hold));
  EXPECT_TRUE(result.ok()) << result;
}

// Two clients take {left, right} and {right, left} — opposite orders — while
// a third takes `right` alone, each many times, each waiting for the others.
// Nobody deadlocks (every acquisition returns within its wait), no two
// holders of a resource overlap, and no key is left at the end.
TEST_F(MultiResourceTest,
       OverlappingSetsInOppositeOrdersNeitherDeadlockNorOverlap) {
  constexpr int kRounds = 30;
  std::mutex mu;
  std::vector<int> holders(2, 0);  // left, right
  int max_seen = 0;
  std::atomic<int> acquired{0};
  std::atomic<int> failed{0};
  std::string first_error;
  auto worker = [&](std::vector<std::string> set) {
    auto client = MakeClient();
    if (client == nullptr) return;
    for (int k = 0; k < kRounds; ++k) {
      absl::StatusOr<Lock> lock =
          client->Acquire(set, Ttl(absl::Seconds(5), absl::Seconds(20)));
      if (!lock.ok()) {
        std::lock_guard<std::mutex> guard(mu);
        if (first_error.empty()) first_error = lock.status().ToString();
        ++failed;
        continue;
      }
      ++acquired;
      {
        std::lock_guard<std::mutex> guard(mu);
        for (const std::string& r : set) {
          int& h = holders[r == "left" ? 0 : 1];
          max_seen = std::max(max_seen, ++h);
        }
      }
      absl::SleepFor(absl::Microseconds(500));
      {
        std::lock_guard<std::mutex> guard(mu);
        for (const std::string& r : set) --holders[r == "left" ? 0 : 1];
      }
      if (!client->Release(*lock).ok()) ++failed;
    }
  };
  const absl::Time start = absl::Now();
  std::thread t1(worker, std::vector<std::string>{"left", "right"});
  std::thread t2(worker, std::vector<std::string>{"right", "left"});
  std::thread t3(worker, std::vector<std::string>{"right"});
  t1.join();
  t2.join();
  t3.join();
  EXPECT_EQ(failed.load(), 0) << first_error;
  EXPECT_EQ(acquired.load(), 3 * kRounds);
  EXPECT_EQ(max_seen, 1) << "two holders of one resource at once";
  // Generous: 90 short critical sections with retry delays of 5-20ms.
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  absl::SleepFor(absl::Milliseconds(100));  // Releases still on their way.
  EXPECT_EQ(MastersHoldingAny({"left", "right"}), 0);
}

TEST_F(MultiResourceTest, ABadSetIsRefusedNamingWhatIsWrong) {
  auto client = MakeClient();
  EXPECT_EQ(client->Acquire(std::vector<std::string>{}, Ttl(absl::Seconds(1)))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Lock> bad = client->Acquire({"ok", ""}, Ttl(absl::Seconds(1)));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("must not be empty"), std::string::npos)
      << bad.status();
  std::vector<std::string> many;
  for (int i = 0; i < 65; ++i) many.push_back(absl::StrCat("r", i));
  absl::StatusOr<Lock> too_many = client->Acquire(many, Ttl(absl::Seconds(1)));
  EXPECT_NE(too_many.status().message().find("at most 64"), std::string::npos)
      << too_many.status();
}

}  // namespace
}  // namespace redlock
