// Copyright 2026 The redlock Authors.
//
// Waiters woken on release (RetryPolicy::wake_on_release), on real masters.
// The waiters here poll every 30 seconds, so an acquisition that completes
// within a few seconds of the release was woken, not polled: each bound below
// is generous for a loaded machine and still far from the poll.

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

namespace redlock {
namespace {

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

  // A waiter that would poll only every kPoll.
  Options WaiterOptions(std::shared_ptr<Observer> observer = nullptr) {
    Options options = testing::TestOptions(cluster_->Uris());
    options.retry.min_delay = kPoll;
    options.retry.max_delay = kPoll;
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

TEST_F(WakeupTest, AWaiterIsWokenByTheReleaseNotByThePoll) {
  auto held = holder_->Acquire("report", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = MakeClient(WaiterOptions());
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("report", Waiting(absl::Seconds(20))); });
  // Its first attempt lost, and it subscribed on every master.
  ASSERT_TRUE(AwaitSubscribers("report", 1));
  absl::SleepFor(absl::Milliseconds(100));  // Its check once subscribed.

  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(absl::Now() - released, kWokenWithin);
  ASSERT_TRUE(waiter->Release(*lock).ok());
  // Health() shows each master's subscriber: its SUBSCRIBE, and the
  // release it heard (and the win the waiter announced). Named by the first
  // master's message, the waiter may have won before the others' arrived:
  // wait for them (bounded).
  for (const MasterHealth& h : testing::AwaitEveryMasterHeard(*waiter)) {
    EXPECT_GE(h.subscriber_requests, 1) << h.master;
    EXPECT_GE(h.subscriber_messages, 1) << h.master;
  }
  for (const MasterHealth& h : holder_->Health()) {
    EXPECT_EQ(h.subscriber_requests, 0) << h.master << ": it never waited";
  }
}

TEST_F(WakeupTest, AWaiterForASetIsWokenByTheReleaseOfOneOfItsResources) {
  auto held = holder_->Acquire("stock:7", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = MakeClient(WaiterOptions());
  ASSERT_NE(waiter, nullptr);
  const std::vector<std::string> set = {"orders:42", "stock:7"};
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire(set, Waiting(absl::Seconds(20))); });
  ASSERT_TRUE(AwaitSubscribers("stock:7", 1));
  ASSERT_TRUE(AwaitSubscribers("orders:42", 1));
  absl::SleepFor(absl::Milliseconds(100));

  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(absl::Now() - released, kWokenWithin);
  EXPECT_EQ(lock->resources(), set);
}

// The release comes right after the waiter's first attempt lost, before it
// subscribed: no message can reach it. It tries once more as soon as it is
// subscribed, and that attempt finds the lock free.
TEST_F(WakeupTest, AReleaseBeforeTheSubscriptionIsCaughtOnceSubscribed) {
  auto held = holder_->Acquire("ledger", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto counter = std::make_shared<AttemptCounter>();
  auto waiter = MakeClient(WaiterOptions(counter));
  ASSERT_NE(waiter, nullptr);
  std::atomic<bool> released_early{false};
  absl::Time released;
  // On the waiter's loop thread, before it can subscribe.
  counter->AfterNextAttempt([&](const AttemptEvent& event) {
    if (event.outcome.ok()) return;
    released = absl::Now();
    released_early = holder_->Release(*held).ok();
  });
  absl::StatusOr<Lock> lock =
      waiter->Acquire("ledger", Waiting(absl::Seconds(20)));
  ASSERT_TRUE(released_early.load());
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(absl::Now() - released, kWokenWithin);
  EXPECT_EQ(counter->lost(), 1);
}

// The masters drop the subscriber connections while the lock is released:
// the message is lost. The client reconnects, subscribes again, and since it
// may have missed a release, tries again at once.
TEST_F(WakeupTest, AWaiterWhoseSubscriberWasKilledStillHearsOfTheRelease) {
  auto held = holder_->Acquire("ingest", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = MakeClient(WaiterOptions());
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("ingest", Waiting(absl::Seconds(20))); });
  ASSERT_TRUE(AwaitSubscribers("ingest", 1));
  absl::SleepFor(absl::Milliseconds(100));

  for (int i = 0; i < cluster_->size(); ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    auto killed = (*client)->Command({"CLIENT", "KILL", "TYPE", "pubsub"});
    ASSERT_TRUE(killed.ok());
    EXPECT_EQ(killed->integer, 1) << "master " << i;
  }
  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(absl::Now() - released, kWokenWithin);
}

// Five clients wait; one release wakes them all, each after its own jitter
// (here up to 1s, so they are far apart). The first retries, wins, and
// announces it; the others stand down instead of trying in vain.
TEST_F(WakeupTest, WokenWaitersStandDownWhenOneOfThemTakesTheLock) {
  auto held = holder_->Acquire("nightly", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  constexpr int kWaiters = 5;
  auto counter = std::make_shared<AttemptCounter>();
  std::vector<std::unique_ptr<Redlock>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    Options options = WaiterOptions(counter);
    options.retry.wake_jitter = absl::Seconds(1);
    waiters.push_back(MakeClient(options));
    ASSERT_NE(waiters.back(), nullptr);
  }
  std::vector<std::unique_ptr<Background<absl::StatusOr<Lock>>>> waiting;
  for (auto& waiter : waiters) {
    waiting.push_back(std::make_unique<Background<absl::StatusOr<Lock>>>(
        [&waiter] { return waiter->Acquire("nightly", Waiting(kPoll / 3)); }));
  }
  ASSERT_TRUE(AwaitSubscribers("nightly", kWaiters));
  // Each waiter's check once subscribed (within its 1s jitter) lost too.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (counter->lost() < 2 * kWaiters && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(counter->lost(), 2 * kWaiters);

  ASSERT_TRUE(holder_->Release(*held).ok());
  // One of them has it within the jitter; the others then have until the
  // end of their wait, far away, before trying again.
  const absl::Time until = absl::Now() + absl::Seconds(3);
  int lost_after_release = 0;
  while (absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(50));
    lost_after_release = counter->lost() - 2 * kWaiters;
  }
  // Two waiters whose jitters fall within a round trip of each other may
  // both try; more than one such collision would be a coincidence.
  EXPECT_LE(lost_after_release, 1);
  int holders = 0;
  for (int i = 0; i < cluster_->size(); ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    auto value = (*client)->Get(LockKey(Options(), "nightly"));
    ASSERT_TRUE(value.ok());
    holders += value->has_value();
  }
  EXPECT_EQ(holders, cluster_->size()) << "one waiter holds it everywhere";
  // The others give up at the end of their wait; release what was won.
  for (auto& w : waiting) {
    absl::StatusOr<Lock> lock = w->Join();
    if (lock.ok()) {
      for (auto& waiter : waiters) waiter->Release(*lock).IgnoreError();
    }
  }
}

// A stopped master accepts the subscriber's connection (the kernel does) and
// never confirms the subscription. The waiter polls with no delay at all,
// yet makes no further attempt until that master's subscription is given up
// (request_timeout, 300ms here): an attempt is never made while a
// subscription that could hear the next release is still on its way.
TEST_F(WakeupTest, TheNextAttemptWaitsUntilEveryMastersSubscriptionSettles) {
  auto held = holder_->Acquire("audit", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto counter = std::make_shared<AttemptCounter>();
  Options options = WaiterOptions(counter);
  options.retry.min_delay = absl::ZeroDuration();
  options.retry.max_delay = absl::ZeroDuration();
  auto waiter = MakeClient(options);
  ASSERT_NE(waiter, nullptr);
  // Every master judged before one stops, so the first attempt runs.
  ASSERT_TRUE(waiter->TryAcquire("warm-up", absl::Seconds(1)).ok());
  ASSERT_TRUE(cluster_->server(2).Stop().ok());
  Background<absl::StatusOr<Lock>> waiting([&] {
    return waiter->Acquire("audit", Waiting(absl::Milliseconds(150)));
  });
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(cluster_->server(2).Continue().ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  // Only the first attempt: the budget ended while the stopped master's
  // subscription was still unsettled.
  EXPECT_EQ(counter->lost(), 1);
}

TEST_F(WakeupTest, WithWakeUpsOffAWaiterPollsAndSubscribesToNothing) {
  auto held = holder_->Acquire("poll-only", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  Options options = testing::TestOptions(cluster_->Uris());
  options.retry.wake_on_release = false;
  options.retry.min_delay = absl::Milliseconds(200);
  options.retry.max_delay = absl::Milliseconds(200);
  auto counter = std::make_shared<AttemptCounter>();
  options.observer = counter;
  auto waiter = MakeClient(options);
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("poll-only", Waiting(absl::Seconds(20))); });
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (counter->lost() < 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_GE(counter->lost(), 2);
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Subscribers(i, "poll-only"), 0) << "master " << i;
  }
  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  for (const MasterHealth& h : waiter->Health()) {
    EXPECT_EQ(h.subscriber_requests, 0) << h.master;
  }
}

// What masters 0 .. masters-1 publish on `channel` while `scene` runs, read
// on connections of the test's own: one list of messages per master.
std::vector<std::vector<std::string>> HeardOnMasters(
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
std::vector<std::string> HeardOnMaster0(RedisCluster& cluster,
                                        const std::string& resource,
                                        absl::FunctionRef<void()> scene) {
  return HeardOnMasters(cluster, LockKey(Options(), resource), 1, scene)[0];
}

// A client that never waited for a resource takes it with a plain SET: no
// announcement. Once it has waited for it (the channel is still subscribed),
// even a new acquisition's first attempt announces its win, so that the
// waiters it may have woken stand down.
TEST_F(WakeupTest, AFirstAttemptAnnouncesItsWinOnlyOnAResourceContendedLately) {
  auto client = MakeClient(WaiterOptions());
  ASSERT_NE(client, nullptr);
  std::vector<std::string> heard = HeardOnMaster0(*cluster_, "rota", [&] {
    auto lock = client->TryAcquire("rota", absl::Seconds(30));
    ASSERT_TRUE(lock.ok()) << lock.status();
    ASSERT_TRUE(client->Release(*lock).ok());
  });
  EXPECT_EQ(heard, (std::vector<std::string>{"released"}));

  // Now it waits for it once.
  auto held = holder_->Acquire("rota", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return client->Acquire("rota", Waiting(absl::Seconds(20))); });
  ASSERT_TRUE(AwaitSubscribers("rota", 1));
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> woken = waiting.Join();
  ASSERT_TRUE(woken.ok()) << woken.status();
  ASSERT_TRUE(client->Release(*woken).ok());

  heard = HeardOnMaster0(*cluster_, "rota", [&] {
    auto lock = client->TryAcquire("rota", absl::Seconds(30));
    ASSERT_TRUE(lock.ok()) << lock.status();
    ASSERT_TRUE(client->Release(*lock).ok());
  });
  EXPECT_EQ(heard, (std::vector<std::string>{"taken", "released"}));
}

// An attempt that lost made no lock: its cleanup deletes what it set without
// waking anyone, and is not sent to the masters that denied it (they set
// nothing of it).
TEST_F(WakeupTest, ALostAttemptCleansUpQuietlyAndOnlyWhereItWasNotDenied) {
  const std::string key = LockKey(Options(), "payroll");
  // Held under another token on masters 1 and 2 only: master 0 grants, the
  // others deny, and the attempt loses.
  for (int i = 1; i <= 2; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SET", key, "other", "PX", "30000"}).ok());
  }
  auto client = MakeClient(WaiterOptions());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->TryAcquire("warm-up", absl::Seconds(1)).ok());
  auto evalsha_calls = [&](int i) -> int64_t {
    auto c = cluster_->Client(i);
    EXPECT_TRUE(c.ok());
    auto info = (*c)->Command({"INFO", "commandstats"});
    EXPECT_TRUE(info.ok());
    const std::string& text = info->str;
    const size_t at = text.find("cmdstat_evalsha:calls=");
    if (at == std::string::npos) return 0;
    return std::stoll(text.substr(at + 22));
  };
  // The warm-up was decided at quorum: the client's own deployment marker
  // writes (EVALSHA too) may still be on their way to a master. Let them
  // land, so that only the attempt below is counted.
  for (int tries = 0; tries < 200; ++tries) {
    const std::vector<MasterHealth> health = client->Health();
    if (std::all_of(health.begin(), health.end(), [](const MasterHealth& h) {
          return h.marker == "trusted";
        })) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  int64_t before1 = evalsha_calls(1), before2 = evalsha_calls(2);
  for (int tries = 0; tries < 100; ++tries) {
    absl::SleepFor(absl::Milliseconds(20));
    const int64_t now1 = evalsha_calls(1), now2 = evalsha_calls(2);
    if (now1 == before1 && now2 == before2) break;
    before1 = now1;
    before2 = now2;
  }
  std::vector<std::string> heard = HeardOnMaster0(*cluster_, "payroll", [&] {
    auto lock = client->TryAcquire("payroll", absl::Seconds(30));
    EXPECT_EQ(lock.status().code(), absl::StatusCode::kAborted)
        << lock.status();
    // Its cleanup has reached master 0 when the key there is gone.
    auto reader = cluster_->Client(0);
    ASSERT_TRUE(reader.ok());
    bool held = true;
    for (int tries = 0; held && tries < 200; ++tries) {
      auto value = (*reader)->Get(key);
      ASSERT_TRUE(value.ok());
      held = value->has_value();
      if (held) absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_FALSE(held) << "the lost attempt's key stayed on master 0";
  });
  EXPECT_TRUE(heard.empty()) << heard.front();
  EXPECT_EQ(evalsha_calls(1), before1);
  EXPECT_EQ(evalsha_calls(2), before2);
}

// A client that releases a lock others wait for and at once wants it again
// does not win the race against the waiter its release woke: its new
// acquisition first waits a wake jitter, as a woken waiter does. The
// releaser's jitter is drawn from [0, 60ms] and the waiter's from the
// default [0, 4ms], so the waiter gets there first nearly every time;
// without the yield the releaser's attempt goes out as the waiter hears the
// release and draws its jitter, and the releaser wins most rounds (the
// contention_peer benchmark: 99% of hand-offs went back to the releaser).
// Each round: the releaser tries again for 150ms only, so it fails if the
// waiter took the lock (held 30s).
TEST_F(WakeupTest, AReleaserWantingTheLockAgainYieldsToTheWaiterItWoke) {
  Options releaser_options = testing::TestOptions(cluster_->Uris());
  releaser_options.retry.max_delay = absl::Milliseconds(60);
  releaser_options.retry.wake_jitter = absl::Milliseconds(60);
  auto releaser = MakeClient(releaser_options);
  ASSERT_NE(releaser, nullptr);
  Options waiter_options = WaiterOptions();
  waiter_options.retry.wake_jitter = absl::Milliseconds(4);
  auto waiter = MakeClient(waiter_options);
  ASSERT_NE(waiter, nullptr);

  // The releaser waits for the lock once, so that it is contended for it
  // (its channel subscribed, lingering between the rounds).
  auto first = holder_->Acquire("queue", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(first.ok()) << first.status();
  Background<absl::StatusOr<Lock>> taking(
      [&] { return releaser->Acquire("queue", Waiting(absl::Seconds(20))); });
  ASSERT_TRUE(AwaitSubscribers("queue", 1));
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(holder_->Release(*first).ok());
  absl::StatusOr<Lock> held = taking.Join();
  ASSERT_TRUE(held.ok()) << held.status();

  constexpr int kRounds = 20;
  int waiter_first = 0;
  for (int round = 0; round < kRounds; ++round) {
    Background<absl::StatusOr<Lock>> waiting(
        [&] { return waiter->Acquire("queue", Waiting(absl::Seconds(20))); });
    // The releaser's lingering subscription and the waiter's.
    ASSERT_TRUE(AwaitSubscribers("queue", 2));
    absl::SleepFor(absl::Milliseconds(100));  // The waiter's check.
    ASSERT_TRUE(releaser->Release(*held).ok());
    absl::StatusOr<Lock> again =
        releaser->Acquire("queue", Waiting(absl::Milliseconds(150)));
    if (again.ok()) {
      // The releaser won: the waiter gets the lock once it is released.
      ASSERT_TRUE(releaser->Release(*again).ok());
    } else {
      EXPECT_EQ(again.status().code(), absl::StatusCode::kAborted)
          << again.status();
      ++waiter_first;
    }
    absl::StatusOr<Lock> waited = waiting.Join();
    ASSERT_TRUE(waited.ok()) << waited.status();
    ASSERT_TRUE(waiter->Release(*waited).ok());
    // The releaser holds it again for the next round (free now).
    held = releaser->Acquire("queue", Waiting(absl::Seconds(5)));
    ASSERT_TRUE(held.ok()) << held.status();
  }
  ASSERT_TRUE(releaser->Release(*held).ok());
  // Nearly every round (see above); by chance the releaser may draw a
  // jitter shorter than the waiter's way to its attempt.
  EXPECT_GE(waiter_first, 13) << "the waiter took the lock first in "
                              << waiter_first << " of " << kRounds << " rounds";
}

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

TEST_F(WakeupQueueTest, TheLockGoesToTheWaitersInTheOrderTheyWereFirstRefused) {
  auto held = holder_->Acquire("queue", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  constexpr int kWaiters = 3;
  std::vector<std::shared_ptr<AttemptCounter>> counters;
  std::vector<std::unique_ptr<Redlock>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    counters.push_back(std::make_shared<AttemptCounter>());
    // The first polls often: its later refusals must not move it back.
    waiters.push_back(MakeClient(QueuedOptions(
        counters.back(), i == 0 ? absl::Milliseconds(100) : kPoll)));
    ASSERT_NE(waiters.back(), nullptr);
  }
  std::mutex mu;
  std::vector<int> order;
  std::vector<absl::Time> acquired_at(kWaiters);
  std::vector<std::unique_ptr<Background<absl::Status>>> waiting;
  for (int i = 0; i < kWaiters; ++i) {
    waiting.push_back(
        std::make_unique<Background<absl::Status>>([&, i]() -> absl::Status {
          absl::StatusOr<Lock> lock =
              waiters[i]->Acquire("queue", Waiting(absl::Seconds(40)));
          if (!lock.ok()) return lock.status();
          {
            std::lock_guard<std::mutex> guard(mu);
            order.push_back(i);
            acquired_at[i] = absl::Now();
          }
          return waiters[i]->Release(*lock).status();
        }));
    // Queued (its attempt once subscribed is its first as a waiting
    // writer) before the next one comes.
    ASSERT_TRUE(AwaitQueued("queue", i + 1)) << "waiter " << i;
  }
  // The first waiter was refused again since the others came.
  const absl::Time polled_until = absl::Now() + absl::Seconds(10);
  while (counters[0]->lost() < 4 && absl::Now() < polled_until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_GE(counters[0]->lost(), 4);

  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*held).ok());
  for (int i = 0; i < kWaiters; ++i) {
    absl::Status status = waiting[i]->Join();
    EXPECT_TRUE(status.ok()) << "waiter " << i << ": " << status;
  }
  EXPECT_EQ(order, std::vector<int>({0, 1, 2}));
  // Named, each tried at once: none waited for the others' grace or poll.
  EXPECT_LT(acquired_at[2] - released, kWokenWithin);
  // The later two tried only when named: their lost attempts are the first
  // one and the one once subscribed, none after a release.
  EXPECT_EQ(counters[1]->lost(), 2);
  EXPECT_EQ(counters[2]->lost(), 2);
}

TEST_F(WakeupQueueTest, AWaiterNamedButGoneHoldsTheOthersBackOnlyForTheGrace) {
  auto held = holder_->Acquire("ghost", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  // A waiter that came first and died without leaving the queue.
  const std::string ghost = "00000000000000000000000000000001";
  for (int i = 0; i < cluster_->size(); ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(
        (*client)
            ->Command({"SADD", WriterWaitingKey(Options(), "ghost"), ghost})
            .ok());
    ASSERT_TRUE(
        (*client)
            ->Command({"SET",
                       WaiterArrivalKeyPrefix(Options(), "ghost") + ghost, "1",
                       "PX", "60000"})
            .ok());
  }
  auto counter = std::make_shared<AttemptCounter>();
  Options options = QueuedOptions(counter);
  options.retry.successor_grace = absl::Milliseconds(200);
  auto waiter = MakeClient(std::move(options));
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("ghost", Waiting(absl::Seconds(20))); });
  ASSERT_TRUE(AwaitQueued("ghost", 2));

  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  // After the grace, not the 30 s poll.
  EXPECT_LT(absl::Now() - released, kWokenWithin);
  EXPECT_EQ(counter->lost(), 2);
  ASSERT_TRUE(waiter->Release(*lock).ok());
}

// Two waiters queued for a lock that is then freed without a message, for
// tests that send each master's message by hand (WakeupQueueTest).
struct TwoQueued {
  std::vector<std::shared_ptr<AttemptCounter>> counters;
  std::vector<std::unique_ptr<Redlock>> waiters;
  std::vector<std::unique_ptr<Background<absl::StatusOr<Lock>>>> waiting;
  std::vector<std::string> ids;  // Their waiter ids, in order of arrival.
};

class WakeupQueueByHandTest : public WakeupQueueTest {
 protected:
  // Queues two waiters for `resource` (held by the holder), waits until
  // both made their first attempt and the one once subscribed, then frees
  // the lock on every master without a message.
  void QueueTwoThenFree(const std::string& resource, TwoQueued* q) {
    held_ = holder_->Acquire(resource, Waiting(absl::ZeroDuration()));
    ASSERT_TRUE(held_.ok()) << held_.status();
    for (int i = 0; i < 2; ++i) {
      q->counters.push_back(std::make_shared<AttemptCounter>());
      q->waiters.push_back(MakeClient(QueuedOptions(q->counters.back())));
      ASSERT_NE(q->waiters.back(), nullptr);
      Redlock* waiter = q->waiters.back().get();
      q->waiting.push_back(std::make_unique<Background<absl::StatusOr<Lock>>>(
          [waiter, resource] {
            return waiter->Acquire(resource, Waiting(absl::Seconds(40)));
          }));
      ASSERT_TRUE(AwaitQueued(resource, i + 1)) << "waiter " << i;
      auto client = cluster_->Client(0);
      ASSERT_TRUE(client.ok());
      auto members = (*client)->Command(
          {"SMEMBERS", WriterWaitingKey(Options(), resource)});
      ASSERT_TRUE(members.ok());
      for (const auto& member : members->elements) {
        if (std::find(q->ids.begin(), q->ids.end(), member.str) ==
            q->ids.end()) {
          q->ids.push_back(member.str);
        }
      }
      ASSERT_EQ(q->ids.size(), static_cast<size_t>(i + 1));
    }
    const absl::Time settled_until = absl::Now() + absl::Seconds(10);
    while ((q->counters[0]->attempts() < 2 || q->counters[1]->attempts() < 2) &&
           absl::Now() < settled_until) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_EQ(q->counters[0]->attempts(), 2);
    ASSERT_EQ(q->counters[1]->attempts(), 2);
    for (int i = 0; i < cluster_->size(); ++i) {
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok());
      ASSERT_TRUE(
          (*client)->Command({"DEL", LockKey(Options(), resource)}).ok());
    }
  }

  // Master `master` announces a release of `resource` naming `id`.
  void Tell(const std::string& resource, int master, const std::string& id) {
    auto client = cluster_->Client(master);
    ASSERT_TRUE(client.ok());
    auto heard = (*client)->Command({"PUBLISH", LockKey(Options(), resource),
                                     absl::StrCat(kReleasedMessage, " ", id)});
    ASSERT_TRUE(heard.ok());
    EXPECT_EQ(heard->integer, 2) << "master " << master;
  }

  // Waiter `winner` of `q` takes the lock at once, and holds it on every
  // master; the other made no attempt meanwhile. Then a real release hands
  // the lock to the other.
  void ExpectOnlyTheOneNamedByAQuorumTries(const std::string& resource,
                                           TwoQueued& q, int winner,
                                           absl::Time told) {
    const int other = 1 - winner;
    absl::StatusOr<Lock> lock = q.waiting[winner]->Join();
    ASSERT_TRUE(lock.ok()) << lock.status();
    EXPECT_LT(absl::Now() - told, kWokenWithin);
    EXPECT_EQ(q.counters[winner]->attempts(), 3);
    for (int i = 0; i < cluster_->size(); ++i) {
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok());
      auto value = (*client)->Get(LockKey(Options(), resource));
      ASSERT_TRUE(value.ok());
      EXPECT_EQ(value->value_or("(none)"), lock->token()) << "master " << i;
    }
    absl::SleepFor(kWouldHaveTried);
    EXPECT_EQ(q.counters[other]->attempts(), 2) << "the other tried as well";
    ASSERT_TRUE(q.waiters[winner]->Release(*lock).ok());
    absl::StatusOr<Lock> next = q.waiting[other]->Join();
    ASSERT_TRUE(next.ok()) << next.status();
    ASSERT_TRUE(q.waiters[other]->Release(*next).ok());
  }

  // Long enough for an attempt at once to be made and counted.
  static constexpr absl::Duration kWouldHaveTried = absl::Milliseconds(300);
  absl::StatusOr<Lock> held_;
};

// Masters may stamp two waiters that queued at about the same moment in
// opposite orders, and so name different waiters in one release. Master 0
// names the first waiter, masters 1 and 2 the second. Only the second,
// once named by a quorum, tries (at once); the first holds back its grace
// (20 s) after master 0's name, so the two never split the votes.
TEST_F(WakeupQueueByHandTest,
       AWaiterNamedByFewerThanAQuorumLeavesTheAttemptToTheOneNamedByOne) {
  TwoQueued q;
  ASSERT_NO_FATAL_FAILURE(QueueTwoThenFree("split", &q));
  Tell("split", 0, q.ids[0]);
  absl::SleepFor(kWouldHaveTried);
  EXPECT_EQ(q.counters[0]->attempts(), 2) << "named by 1 of 3, it tried";
  Tell("split", 1, q.ids[1]);
  absl::SleepFor(kWouldHaveTried);
  EXPECT_EQ(q.counters[1]->attempts(), 2) << "named by 1 of 3, it tried";
  const absl::Time told = absl::Now();
  Tell("split", 2, q.ids[1]);
  ExpectOnlyTheOneNamedByAQuorumTries("split", q, /*winner=*/1, told);
}

// Names from two releases never add up: master 0 names the first waiter,
// then (a later release) the second; master 1 names the first. The first
// holds only master 1's name now, not a quorum, and must not try; the
// second, named by masters 0 and then 2, takes the lock.
TEST_F(WakeupQueueByHandTest, OnlyEachMastersLatestNameCounts) {
  TwoQueued q;
  ASSERT_NO_FATAL_FAILURE(QueueTwoThenFree("latest", &q));
  Tell("latest", 0, q.ids[0]);
  Tell("latest", 0, q.ids[1]);
  absl::SleepFor(kWouldHaveTried);
  Tell("latest", 1, q.ids[0]);
  absl::SleepFor(kWouldHaveTried);
  EXPECT_EQ(q.counters[0]->attempts(), 2)
      << "counted master 0's name that master 0 took back";
  EXPECT_EQ(q.counters[1]->attempts(), 2) << "named by 1 of 3, it tried";
  const absl::Time told = absl::Now();
  Tell("latest", 2, q.ids[1]);
  ExpectOnlyTheOneNamedByAQuorumTries("latest", q, /*winner=*/1, told);
}

// Hand-off in the release (RetryPolicy::hand_off): a queued waiter's
// refused attempts leave an entry, and the release sets the key to its
// token instead of deleting it.
class HandOffTest : public WakeupQueueTest {
 protected:
  Options HandOffOptions(std::shared_ptr<Observer> observer,
                         absl::Duration poll = kPoll) {
    Options options = QueuedOptions(std::move(observer), poll);
    options.retry.hand_off = true;
    return options;
  }

  // The scene most hand-off tests start from: holder_ holds `resource`,
  // and a hand-off client counting into `counter` waits for it (up to 20 s,
  // in the background) until queued on every master.
  struct Queued {
    absl::StatusOr<Lock> held = absl::UnknownError("not taken");
    std::shared_ptr<AttemptCounter> counter =
        std::make_shared<AttemptCounter>();
    std::unique_ptr<Redlock> waiter;
    std::unique_ptr<Background<absl::StatusOr<Lock>>> waiting;
  };
  // Sets the scene up, the waiter's options changed by `tune` first; fails
  // the test (ADD_FAILURE) and returns what it has if a step fails.
  std::unique_ptr<Queued> QueueWaiter(
      const std::string& resource,
      absl::FunctionRef<void(Options&)> tune = [](Options&) {}) {
    auto q = std::make_unique<Queued>();
    q->held = holder_->Acquire(resource, Waiting(absl::ZeroDuration()));
    if (!q->held.ok()) {
      ADD_FAILURE() << q->held.status();
      return q;
    }
    Options options = HandOffOptions(q->counter);
    tune(options);
    q->waiter = MakeClient(std::move(options));
    if (q->waiter == nullptr) {
      ADD_FAILURE() << "no waiter";
      return q;
    }
    Redlock* waiter = q->waiter.get();
    q->waiting =
        std::make_unique<Background<absl::StatusOr<Lock>>>([waiter, resource] {
          return waiter->Acquire(resource, Waiting(absl::Seconds(20)));
        });
    if (AwaitEntries(resource).empty()) ADD_FAILURE() << "not queued";
    return q;
  }

  // Waits (bounded) until every master holds a hand-off entry for
  // `resource`; returns the last one read on master 0 ("<proof> <ttl>
  // <token>"), or empty.
  std::string AwaitEntries(const std::string& resource) {
    const std::string pattern =
        WaiterHandOffKeyPrefix(Options(), resource) + "*";
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      std::string entry;
      bool all = true;
      for (int i = 0; i < cluster_->size() && all; ++i) {
        auto client = cluster_->Client(i);
        if (!client.ok()) return "";
        auto keys = (*client)->Command({"KEYS", pattern});
        all = keys.ok() && keys->elements.size() == 1;
        if (all && i == 0) {
          auto value = (*client)->Command({"GET", keys->elements[0].str});
          all = value.ok() && !value->str.empty();
          if (all) entry = value->str;
        }
      }
      if (all) return entry;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return "";
  }

  // Waits (bounded) until at least `masters` masters hold one hand-off
  // entry for `resource`, for another token than `not_token`. Not every
  // master need: one that a release reached only after its heir had won
  // freed the key instead of handing it on, and there the next waiter's
  // attempts win (and give it back) and leave no entry.
  bool AwaitEntriesOn(const std::string& resource, int masters,
                      const std::string& not_token) {
    const std::string pattern =
        WaiterHandOffKeyPrefix(Options(), resource) + "*";
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      int with = 0;
      for (int i = 0; i < cluster_->size(); ++i) {
        auto client = cluster_->Client(i);
        if (!client.ok()) return false;
        auto keys = (*client)->Command({"KEYS", pattern});
        if (!keys.ok() || keys->elements.size() != 1) continue;
        auto value = (*client)->Command({"GET", keys->elements[0].str});
        if (value.ok() && !value->str.empty() &&
            !absl::EndsWith(value->str, " " + not_token)) {
          ++with;
        }
      }
      if (with >= masters) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  // GET `key` on master `i` ("" if missing).
  std::string Get(int i, const std::string& key) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok());
    if (!client.ok()) return "";
    auto reply = (*client)->Command({"GET", key});
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply->str : "";
  }

  // Waits (bounded) until no key matches `pattern` on master `i`: what a
  // client sends without waiting for it (a win's clean-up) may still be on
  // its way. Returns the last count.
  size_t AwaitNone(int i, const std::string& pattern) {
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    size_t n = Count(i, pattern);
    while (n > 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
      n = Count(i, pattern);
    }
    return n;
  }

  // KEYS `pattern` on master `i`.
  size_t Count(int i, const std::string& pattern) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok());
    if (!client.ok()) return 0;
    auto reply = (*client)->Command({"KEYS", pattern});
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply->elements.size() : 0;
  }
};

TEST_F(HandOffTest, TheReleaseHandsTheLockToTheQueuedWaiterWithoutAnAttempt) {
  std::unique_ptr<Queued> q = QueueWaiter("baton");
  ASSERT_FALSE(::testing::Test::HasFailure());
  // The attempt that left the entries was sent before this.
  const absl::Time entered = absl::Now();
  EXPECT_EQ(q->counter->attempts(), 2);  // The first, and the one subscribed.
  absl::SleepFor(absl::Seconds(1));

  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*q->held).ok());
  absl::StatusOr<Lock> lock = q->waiting->Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_LT(absl::Now() - released, kWokenWithin);
  // Held without a third attempt: the release set every master's key to
  // the waiter's token, and took its entry and place.
  EXPECT_EQ(q->counter->attempts(), 2);
  EXPECT_EQ(q->counter->handed_over(), 1);
  // Valid from when that attempt was sent, not from the release: the second
  // waited before the release is not in it.
  EXPECT_LT(lock->remaining(), absl::Seconds(30) - (released - entered));
  EXPECT_GT(lock->remaining(), absl::Seconds(25));
  // A quorum of masters handed it over (a master the release reached only
  // after the win may have found the waiter's entry gone, removed by the
  // win, and freed the key instead); no key is anyone else's.
  const std::string key = LockKey(Options(), "baton");
  int handed = 0;
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(AwaitNone(i, WaiterHandOffKeyPrefix(Options(), "baton") + "*"),
              0u);
    EXPECT_EQ(AwaitNone(i, WriterWaitingKey(Options(), "baton")), 0u);
    // The holder's release may still be on its way to a master past its
    // quorum (bounded).
    const absl::Time until = absl::Now() + absl::Seconds(5);
    while (Get(i, key) == q->held->token() && absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    const std::string value = Get(i, key);
    handed += value == lock->token() ? 1 : 0;
    EXPECT_TRUE(value == lock->token() || value.empty())
        << "master " << i << ": " << value;
  }
  EXPECT_GE(handed, 2);
  ASSERT_TRUE(q->waiter->Release(*lock).ok());
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Get(i, key), "") << "master " << i;
  }
}

// A release tells the heir alone: the hand-off is published on the heir's
// own channel (named as its hand-off entry), and nothing on the lock's, so
// the other waiters sleep on. The heir still wins without an attempt.
TEST_F(HandOffTest, AHandOffIsPublishedOnTheHeirsOwnChannelAlone) {
  std::unique_ptr<Queued> q = QueueWaiter("relay");
  ASSERT_FALSE(::testing::Test::HasFailure());
  // The entry's name on master 0 is the heir's channel.
  auto client = cluster_->Client(0);
  ASSERT_TRUE(client.ok());
  auto entries = (*client)->Command(
      {"KEYS", WaiterHandOffKeyPrefix(Options(), "relay") + "*"});
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->elements.size(), 1u);
  const std::string own = entries->elements[0].str;

  absl::StatusOr<Lock> lock = absl::UnknownError("not joined");
  const int n = cluster_->size();
  std::vector<std::vector<std::string>> on_own;
  const std::vector<std::vector<std::string>> on_lock =
      HeardOnMasters(*cluster_, LockKey(Options(), "relay"), n, [&] {
        on_own = HeardOnMasters(*cluster_, own, n, [&] {
          ASSERT_TRUE(holder_->Release(*q->held).ok());
          lock = q->waiting->Join();
        });
      });
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(q->counter->handed_over(), 1);
  EXPECT_EQ(q->counter->attempts(), 2);  // The first, and the one queued.
  // Won by hand-offs from a quorum, each heard on the heir's channel (a
  // master the release reached after the win may have found the entry
  // gone and freed the key, announcing "released" on the lock's).
  int granted = 0;
  for (int i = 0; i < n; ++i) {
    for (const std::string& m : on_own[i]) {
      EXPECT_TRUE(absl::StartsWith(m, "granted ")) << i << ": " << m;
      ++granted;
    }
    for (const std::string& m : on_lock[i]) {
      EXPECT_FALSE(absl::StartsWith(m, "granted")) << i << ": " << m;
    }
  }
  EXPECT_GE(granted, 2);
  ASSERT_TRUE(q->waiter->Release(*lock).ok());
}

// A client that released a contended lock and wants it again at once
// yields first (already watching the lock's channels), and only then gets
// its waiter id: it must subscribe its own channel then, or the release
// that hands it the lock tells nobody.
TEST_F(HandOffTest, AWaiterThatYieldedFirstIsHandedTheLockOnItsOwnChannel) {
  // A waits for the lock and is handed it: its channels are subscribed.
  std::unique_ptr<Queued> q = QueueWaiter("ring", [](Options& options) {
    options.retry.min_delay = absl::Milliseconds(300);
    options.retry.max_delay = absl::Milliseconds(300);
    options.retry.successor_grace = absl::Milliseconds(200);
  });
  ASSERT_FALSE(::testing::Test::HasFailure());
  Redlock* a = q->waiter.get();
  AttemptCounter* a_counter = q->counter.get();
  ASSERT_TRUE(holder_->Release(*q->held).ok());
  absl::StatusOr<Lock> a_lock = q->waiting->Join();
  ASSERT_TRUE(a_lock.ok()) << a_lock.status();
  ASSERT_EQ(a_counter->handed_over(), 1);

  // B queues behind A; A releases (B is handed it) and at once wants it
  // back: it yields, is refused, gets its id and queues behind B.
  auto b_counter = std::make_shared<AttemptCounter>();
  auto b = MakeClient(HandOffOptions(b_counter));
  ASSERT_NE(b, nullptr);
  Background<absl::StatusOr<Lock>> b_waits(
      [&] { return b->Acquire("ring", Waiting(absl::Seconds(20))); });
  const int quorum = cluster_->size() / 2 + 1;
  ASSERT_TRUE(AwaitEntriesOn("ring", quorum, a_lock->token()));
  ASSERT_TRUE(a->Release(*a_lock).ok());
  Background<absl::StatusOr<Lock>> a_again(
      [&] { return a->Acquire("ring", Waiting(absl::Seconds(20))); });
  absl::StatusOr<Lock> b_lock = b_waits.Join();
  ASSERT_TRUE(b_lock.ok()) << b_lock.status();
  // A's entries, on the masters where B holds the key.
  ASSERT_TRUE(AwaitEntriesOn("ring", quorum, b_lock->token()));

  ASSERT_TRUE(b->Release(*b_lock).ok());
  absl::StatusOr<Lock> a_second = a_again.Join();
  ASSERT_TRUE(a_second.ok()) << a_second.status();
  // Handed over, not found by its next poll.
  EXPECT_EQ(a_counter->handed_over(), 2);
  ASSERT_TRUE(a->Release(*a_second).ok());
}

TEST_F(HandOffTest, AHandOffWithAProofTheWaiterNeverSentGrantsNothing) {
  auto held = holder_->Acquire("forged", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = MakeClient(HandOffOptions(nullptr));
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("forged", Waiting(absl::Seconds(2))); });
  ASSERT_FALSE(AwaitEntries("forged").empty());
  // Every master "hands it over" with a proof of nobody's, while the
  // holder holds it.
  for (int i = 0; i < cluster_->size(); ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)
                    ->Command({"PUBLISH", LockKey(Options(), "forged"),
                               "granted 0123456789abcdef0123456789abcdef"})
                    .ok());
  }
  absl::StatusOr<Lock> lock = waiting.Join();
  EXPECT_FALSE(lock.ok()) << "won while the holder holds it";
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  ASSERT_TRUE(holder_->Release(*held).ok());
}

TEST_F(HandOffTest, AWaiterThatGivesUpHandsOnWhatItWasHandedAndLeavesNoEntry) {
  auto held = holder_->Acquire("leaver", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = MakeClient(HandOffOptions(nullptr));
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("leaver", Waiting(absl::Seconds(2))); });
  const std::string entry = AwaitEntries("leaver");
  ASSERT_FALSE(entry.empty());
  const std::string token = entry.substr(entry.rfind(' ') + 1);
  // Master 0 handed it the key (as a release would), the others did not.
  const std::string key = LockKey(Options(), "leaver");
  {
    auto client = cluster_->Client(0);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SET", key, token, "PX", "30000"}).ok());
  }
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_FALSE(lock.ok());
  // Its withdrawal gave master 0's key back, and left no entry or place
  // anywhere (bounded: sent as it gave up, not awaited).
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (Get(0, key) == token && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(Get(0, key), "");
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(AwaitNone(i, WaiterHandOffKeyPrefix(Options(), "leaver") + "*"),
              0u)
        << "master " << i;
    EXPECT_EQ(AwaitNone(i, WriterWaitingKey(Options(), "leaver")), 0u)
        << "master " << i;
  }
  // So the holder's release frees the lock: nobody to hand it to.
  ASSERT_TRUE(holder_->Release(*held).ok());
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Get(i, key), "") << "master " << i;
  }
}

TEST_F(HandOffTest, AReleaseNeverHandsTheLockBackToTheTokenItReleases) {
  auto held = holder_->Acquire("mirror", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  // The holder's own token queued with an entry (a holder still queued
  // where a release handed the key elsewhere), and a ghost's after it.
  const std::string self = "00000000000000000000000000000001";
  const std::string ghost = "00000000000000000000000000000002";
  for (int i = 0; i < cluster_->size(); ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    for (const auto& [id, at, token] :
         {std::tuple<std::string, std::string, std::string>{self, "1",
                                                            held->token()},
          {ghost, "2", "abcdef"}}) {
      ASSERT_TRUE(
          (*client)
              ->Command({"SADD", WriterWaitingKey(Options(), "mirror"), id})
              .ok());
      ASSERT_TRUE(
          (*client)
              ->Command({"SET",
                         WaiterArrivalKeyPrefix(Options(), "mirror") + id, at,
                         "PX", "60000"})
              .ok());
      ASSERT_TRUE(
          (*client)
              ->Command({"SET",
                         WaiterHandOffKeyPrefix(Options(), "mirror") + id,
                         "feed 30000 " + token, "PX", "60000"})
              .ok());
    }
  }
  ASSERT_TRUE(holder_->Release(*held).ok());
  // Handed to the ghost, queued second: never back to the holder's token.
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Get(i, LockKey(Options(), "mirror")), "abcdef") << "master " << i;
  }
}

// A hand-off counts only from the server run the master's command
// connection judged: here master 0's address leads the command connection
// to one server and, opened later, the subscriber to another, where a
// "hand-off" with the waiter's real proof is published. With master 1's
// hand-off that would make 2 of 3 while the holder still holds masters 0
// and 2.
TEST_F(HandOffTest,
       AHandOffHeardFromAnotherServerRunThanTheJudgedOneCountsNot) {
  auto stranger = RedisServer::Start({});
  ASSERT_TRUE(stranger.ok()) << stranger.status();
  auto proxy = FaultProxy::Start({.upstream_port = cluster_->server(0).port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  auto held = holder_->Acquire("split", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  Options options = HandOffOptions(nullptr);
  options.masters = {(*proxy)->Uri(), cluster_->Uris()[1], cluster_->Uris()[2]};
  auto waiter = MakeClient(std::move(options));
  ASSERT_NE(waiter, nullptr);
  // Its command connections are up (to master 0's server through the
  // proxy); the subscriber it opens when it first waits goes elsewhere.
  const absl::Time up_until = absl::Now() + absl::Seconds(10);
  auto all_up = [&] {
    for (const MasterHealth& h : waiter->Health()) {
      if (!h.connected) return false;
    }
    return true;
  };
  while (!all_up() && absl::Now() < up_until) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_TRUE(all_up());
  ASSERT_TRUE((*proxy)->SetUpstreamPort((*stranger)->port()));

  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("split", Waiting(absl::Seconds(2))); });
  const std::string entry = AwaitEntries("split");
  ASSERT_FALSE(entry.empty());
  const std::string proof = entry.substr(0, entry.find(' '));
  const std::string token = entry.substr(entry.rfind(' ') + 1);
  const std::string key = LockKey(Options(), "split");
  // Its subscriber to master 0's address reached the stranger.
  auto to_stranger = RedisClient::Connect("127.0.0.1", (*stranger)->port());
  ASSERT_TRUE(to_stranger.ok()) << to_stranger.status();
  const absl::Time subscribed_until = absl::Now() + absl::Seconds(10);
  int64_t listening = 0;
  while (listening < 1 && absl::Now() < subscribed_until) {
    auto reply = (*to_stranger)->Command({"PUBSUB", "NUMSUB", key});
    ASSERT_TRUE(reply.ok());
    listening = reply->elements.size() == 2 ? reply->elements[1].integer : 0;
    if (listening < 1) absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(listening, 1);
  // Master 1 hands it over, as a release there would; the stranger
  // publishes the same.
  {
    auto client = cluster_->Client(1);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SET", key, token, "PX", "30000"}).ok());
    ASSERT_TRUE((*client)->Command({"PUBLISH", key, "granted " + proof}).ok());
  }
  ASSERT_TRUE(
      (*to_stranger)->Command({"PUBLISH", key, "granted " + proof}).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  EXPECT_FALSE(lock.ok()) << "won while the holder holds masters 0 and 2";
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  ASSERT_TRUE(holder_->Release(*held).ok());
}

// A lost attempt gives back what a master granted it (the key and its entry
// there, in one step); a hand-off that master published before that step
// is heard after it, and must not count: the key it set is gone. Here master
// 0 granted the waiter's attempt, got it back, and another client took it
// there; its late "hand-off" with that attempt's proof and master 1's real
// one would make 2 of 3 while the others hold masters 0 and 2.
TEST_F(HandOffTest, AHandOffFromBeforeALostAttemptsGiveBackCountsNot) {
  auto held = holder_->Acquire("given", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  const std::string key = LockKey(Options(), "given");
  {
    auto client = cluster_->Client(0);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"DEL", key}).ok());
  }
  // Masters 1 and 2 answer the waiter 50ms late, so that master 0's grant
  // is in when the round is lost.
  std::vector<std::unique_ptr<FaultProxy>> slow;
  for (int i = 1; i <= 2; ++i) {
    auto proxy =
        FaultProxy::Start({.upstream_port = cluster_->server(i).port()});
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    (*proxy)->SetLatency(absl::ZeroDuration(), absl::Milliseconds(50));
    slow.push_back(*std::move(proxy));
  }
  auto counter = std::make_shared<AttemptCounter>();
  Options options = HandOffOptions(counter);
  options.masters = {cluster_->Uris()[0], slow[0]->Uri(), slow[1]->Uri()};
  options.request_timeout = absl::Milliseconds(500);
  auto waiter = MakeClient(std::move(options));
  ASSERT_NE(waiter, nullptr);
  Background<absl::StatusOr<Lock>> waiting(
      [&] { return waiter->Acquire("given", Waiting(absl::Seconds(3))); });
  // Its two attempts lost (master 0 granted both, 1 and 2 denied); the
  // second, a waiting writer's, left entries on masters 1 and 2 and gave
  // master 0 back.
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (counter->lost() < 2 && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_EQ(counter->lost(), 2);
  while (Get(0, key) != "" && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  const std::string pattern = WaiterHandOffKeyPrefix(Options(), "given") + "*";
  EXPECT_EQ(Count(0, pattern), 0u);
  ASSERT_EQ(Count(1, pattern), 1u);
  std::string entry;
  {
    auto client = cluster_->Client(1);
    ASSERT_TRUE(client.ok());
    auto keys = (*client)->Command({"KEYS", pattern});
    ASSERT_TRUE(keys.ok() && keys->elements.size() == 1);
    entry = Get(1, keys->elements[0].str);
  }
  ASSERT_FALSE(entry.empty());
  const std::string proof = entry.substr(0, entry.find(' '));
  const std::string token = entry.substr(entry.rfind(' ') + 1);
  EXPECT_EQ(Get(0, key), "");  // Given back...
  // ...and taken by another client since. Master 0's message from before
  // the give-back is heard only now; master 1 hands it over for real.
  {
    auto client = cluster_->Client(0);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(
        (*client)->Command({"SET", key, "another", "PX", "30000"}).ok());
    ASSERT_TRUE((*client)->Command({"PUBLISH", key, "granted " + proof}).ok());
  }
  {
    auto client = cluster_->Client(1);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"SET", key, token, "PX", "30000"}).ok());
    ASSERT_TRUE((*client)->Command({"PUBLISH", key, "granted " + proof}).ok());
  }
  absl::StatusOr<Lock> lock = waiting.Join();
  EXPECT_FALSE(lock.ok()) << "won on masters 0 (another's) and 1";
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  ASSERT_TRUE(holder_->Release(*held).ok());
}

}  // namespace
}  // namespace redlock
