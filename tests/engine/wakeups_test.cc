// Copyright 2026 The redlock Authors.
//
// Waiters woken on release (RetryPolicy::wake_on_release), on real masters.
// The waiters here poll every 30 seconds, so an acquisition that completes
// within a few seconds of the release was woken, not polled: each bound below
// is generous for a loaded machine and still far from the poll.

#include "tests/engine/wakeup_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::wakeup_testing;  // NOLINT: the shared fixtures.

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
  // One waiter holds it everywhere; after a collision the loser gave back
  // the master it took, so the winner holds a quorum.
  if (lost_after_release == 0) {
    EXPECT_EQ(holders, cluster_->size()) << "one waiter holds it everywhere";
  } else {
    EXPECT_GE(holders, cluster_->size() / 2 + 1) << "the winner holds a quorum";
  }
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
  // A hand-off client does not yield: HandOffTest pins what it does.
  releaser_options.retry.hand_off = false;
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

}  // namespace
}  // namespace redlock
