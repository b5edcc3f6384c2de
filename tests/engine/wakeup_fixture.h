// Copyright 2026 The redlock Authors.
//
// What the wake-up tests (wakeups_test.cc) and the hand-off tests
// (handoff_test.cc) share: three real masters, a holder, waiters that poll
// every 30 seconds (so an acquisition within a few seconds of the release
// was woken, not polled), and the queue of waiting writers.

#ifndef REDLOCK_TESTS_ENGINE_WAKEUP_FIXTURE_H_
#define REDLOCK_TESTS_ENGINE_WAKEUP_FIXTURE_H_

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/health.h"
#include "redlock/keys.h"
#include "redlock/observer.h"
#include "redlock/redlock.h"
#include "tests/support/attempt_counter.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/heard_messages.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock::wakeup_testing {

using ::redlock::testing::AttemptCounter;
using ::redlock::testing::FaultProxy;
using ::redlock::testing::RedisClient;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

constexpr absl::Duration kPoll = absl::Seconds(30);
// What "woken, not polled" allows: far below kPoll and the waits below.
constexpr absl::Duration kWokenWithin = absl::Seconds(5);

class WakeupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "kills its own masters' subscriber connections";
    }
    auto cluster = RedisCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    holder_ = MakeClient(testing::TestOptions(cluster_->Uris()));
    ASSERT_NE(holder_, nullptr);
  }

  std::unique_ptr<Redlock> MakeClient(Options options) {
    auto client = Redlock::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // A waiter that would poll only every kPoll, woken on release without
  // the hand-off (RetryPolicy::hand_off, on by default): the wake-up tests
  // pin what a woken waiter does; HandOffTest turns the hand-off on.
  Options WaiterOptions(std::shared_ptr<Observer> observer = nullptr) {
    Options options = testing::TestOptions(cluster_->Uris());
    options.retry.min_delay = kPoll;
    options.retry.max_delay = kPoll;
    options.retry.hand_off = false;
    options.observer = std::move(observer);
    return options;
  }

  static AcquireOptions Waiting(absl::Duration wait) {
    AcquireOptions options;
    options.ttl = absl::Seconds(30);
    options.wait = wait;
    return options;
  }

  // PUBSUB NUMSUB for `resource`'s channel on master `i`.
  int64_t Subscribers(int i, const std::string& resource) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok());
    if (!client.ok()) return -1;
    auto reply =
        (*client)->Command({"PUBSUB", "NUMSUB", LockKey(Options(), resource)});
    EXPECT_TRUE(reply.ok());
    if (!reply.ok() || reply->elements.size() != 2) return -1;
    return reply->elements[1].integer;
  }

  // Waits (bounded) until `resource`'s channel has at least `n` subscribers
  // on every master.
  bool AwaitSubscribers(const std::string& resource, int64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      bool all = true;
      for (int i = 0; i < cluster_->size(); ++i) {
        all = all && Subscribers(i, resource) >= n;
      }
      if (all) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  std::unique_ptr<RedisCluster> cluster_;
  std::unique_ptr<Redlock> holder_;
};

// Runs `fn` on a thread; Join() returns its result.
template <typename T>
class Background {
 public:
  explicit Background(absl::AnyInvocable<T()> fn)
      : thread_([this, fn = std::move(fn)]() mutable { result_ = fn(); }) {}
  ~Background() {
    if (thread_.joinable()) thread_.join();
  }
  T Join() {
    thread_.join();
    return std::move(*result_);
  }

 private:
  std::optional<T> result_;
  std::thread thread_;
};

// Waiters queued on the masters (RetryPolicy::successor_grace): the release
// names the one refused first, which tries at once; the others hold back.
class WakeupQueueTest : public WakeupTest {
 protected:
  // The writers waiting for `resource` on every master (WriterWaitingKey()).
  bool AwaitQueued(const std::string& resource, int64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      bool all = true;
      for (int i = 0; i < cluster_->size() && all; ++i) {
        auto client = cluster_->Client(i);
        if (!client.ok()) return false;
        auto reply = (*client)->Command(
            {"SCARD", WriterWaitingKey(Options(), resource)});
        all = reply.ok() && reply->integer == n;
      }
      if (all) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  // A waiter polling every `poll` that, not named, holds back far longer
  // than this test lasts.
  Options QueuedOptions(std::shared_ptr<Observer> observer,
                        absl::Duration poll = kPoll) {
    Options options = WaiterOptions(std::move(observer));
    options.retry.min_delay = poll;
    options.retry.max_delay = poll;
    options.retry.successor_grace = absl::Seconds(20);
    return options;
  }
};

// What masters 0 .. masters-1 publish on `channel` while `scene` runs, read
// on connections of the test's own: one list of messages per master.
inline std::vector<std::vector<std::string>> HeardOnMasters(
    RedisCluster& cluster, const std::string& channel, int masters,
    absl::FunctionRef<void()> scene) {
  std::vector<std::vector<std::string>> heard(masters);
  std::vector<std::unique_ptr<testing::RedisClient>> subs;
  for (int i = 0; i < masters; ++i) {
    auto sub = cluster.Client(i);
    EXPECT_TRUE(sub.ok());
    if (!sub.ok()) return heard;
    auto subscribed = (*sub)->Command({"SUBSCRIBE", channel});
    EXPECT_TRUE(subscribed.ok());
    subs.push_back(*std::move(sub));
  }
  scene();
  for (int i = 0; i < masters; ++i) {
    // A PING marks the end: everything published before it comes first
    // (the PING's own read returns the first of them).
    absl::StatusOr<testing::Reply> reply = subs[i]->Command({"PING"});
    for (; reply.ok() && reply->elements.size() == 3 &&
           reply->elements[0].str == "message";
         reply = subs[i]->ReadReply()) {
      heard[i].push_back(reply->elements[2].str);
    }
    EXPECT_TRUE(reply.ok()) << reply.status();
  }
  return heard;
}

// What master 0 publishes on `resource`'s channel while `scene` runs.
inline std::vector<std::string> HeardOnMaster0(
    RedisCluster& cluster, const std::string& resource,
    absl::FunctionRef<void()> scene) {
  return HeardOnMasters(cluster, LockKey(Options(), resource), 1, scene)[0];
}

}  // namespace redlock::wakeup_testing

#endif  // REDLOCK_TESTS_ENGINE_WAKEUP_FIXTURE_H_
