// Copyright 2026 The redlock Authors.
//
// The hand-off (RetryPolicy::hand_off), on real masters: a release hands a
// contended lock to the writer queued longest, on that waiter's own channel,
// with the proof it left in its entry; what a proof, a give-back and a
// departure may and may not grant.

#include "tests/engine/wakeup_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::wakeup_testing;  // NOLINT: the shared fixtures.

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

  // The names KEYS `pattern` finds on master `i`.
  std::vector<std::string> Keys(int i, const std::string& pattern) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok());
    if (!client.ok()) return {};
    auto reply = (*client)->Command({"KEYS", pattern});
    EXPECT_TRUE(reply.ok());
    std::vector<std::string> names;
    if (reply.ok()) {
      for (const auto& e : reply->elements) names.push_back(e.str);
    }
    return names;
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

// A hand-off client that released a contended lock and wants it again at
// once does not hold back (successor_grace, 20 s here) as a client without
// hand-off does: its release handed the lock to the waiter queued longest,
// and its own first attempt queues it behind that waiter, on its own
// channel (subscribed before that attempt), so it is handed the lock when
// that waiter releases.
TEST_F(HandOffTest,
       AReleaserWantingTheLockAgainQueuesBehindTheWaiterItHandedItTo) {
  // A waits for the lock and is handed it: its channels are subscribed.
  std::unique_ptr<Queued> q = QueueWaiter("ring", [](Options& options) {
    options.retry.min_delay = absl::Milliseconds(300);
    options.retry.max_delay = absl::Milliseconds(300);
    options.retry.successor_grace = absl::Seconds(20);
  });
  ASSERT_FALSE(::testing::Test::HasFailure());
  Redlock* a = q->waiter.get();
  AttemptCounter* a_counter = q->counter.get();
  ASSERT_TRUE(holder_->Release(*q->held).ok());
  absl::StatusOr<Lock> a_lock = q->waiting->Join();
  ASSERT_TRUE(a_lock.ok()) << a_lock.status();
  ASSERT_EQ(a_counter->handed_over(), 1);

  // B queues behind A; A releases (B is handed it) and at once wants it
  // back: its first attempt queues it behind B.
  auto b_counter = std::make_shared<AttemptCounter>();
  auto b = MakeClient(HandOffOptions(b_counter));
  ASSERT_NE(b, nullptr);
  Background<absl::StatusOr<Lock>> b_waits(
      [&] { return b->Acquire("ring", Waiting(absl::Seconds(20))); });
  const int quorum = cluster_->size() / 2 + 1;
  ASSERT_TRUE(AwaitEntriesOn("ring", quorum, a_lock->token()));
  ASSERT_TRUE(a->Release(*a_lock).ok());
  const int a_attempts = a_counter->attempts();
  Background<absl::StatusOr<Lock>> a_again(
      [&] { return a->Acquire("ring", Waiting(absl::Seconds(60))); });
  absl::StatusOr<Lock> b_lock = b_waits.Join();
  ASSERT_TRUE(b_lock.ok()) << b_lock.status();
  EXPECT_EQ(b_counter->handed_over(), 1);
  // A's entries, on the masters where B holds the key.
  ASSERT_TRUE(AwaitEntriesOn("ring", quorum, b_lock->token()));

  const absl::Time released = absl::Now();
  ASSERT_TRUE(b->Release(*b_lock).ok());
  absl::StatusOr<Lock> a_second = a_again.Join();
  ASSERT_TRUE(a_second.ok()) << a_second.status();
  EXPECT_LT(absl::Now() - released, kWokenWithin)
      << "held back for successor_grace instead of queueing";
  // Handed over, not found by its next poll, after the one attempt that
  // queued it (and maybe polls of 300 ms while B held the lock).
  EXPECT_EQ(a_counter->handed_over(), 2);
  EXPECT_GE(a_counter->attempts() - a_attempts, 1);
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

// A client that waited for a lock lately (its channels still subscribed)
// queues with the first attempt of its next acquisition: one attempt leaves
// its entries, and the release hands the lock over with no other.
TEST_F(HandOffTest, AClientThatWaitedLatelyQueuesWithItsFirstAttempt) {
  std::unique_ptr<Queued> q = QueueWaiter("relay");
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::string entries = WaiterHandOffKeyPrefix(Options(), "relay") + "*";
  const std::vector<std::string> first_entry = Keys(0, entries);
  ASSERT_TRUE(holder_->Release(*q->held).ok());
  absl::StatusOr<Lock> first = q->waiting->Join();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(q->waiter->Release(*first).ok());
  // The release is decided at a quorum; its "released" on a master past
  // it, heard during the attempt below, would rightly bring a second one.
  for (int i = 0; i < cluster_->size(); ++i) {
    ASSERT_EQ(AwaitNone(i, LockKey(Options(), "relay")), 0u);
  }
  absl::SleepFor(absl::Milliseconds(50));

  absl::StatusOr<Lock> held =
      holder_->Acquire("relay", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  const int before = q->counter->attempts();
  Redlock* waiter = q->waiter.get();
  Background<absl::StatusOr<Lock>> second([waiter] {
    return waiter->Acquire("relay", Waiting(absl::Seconds(20)));
  });
  ASSERT_FALSE(AwaitEntries("relay").empty());
  const absl::Time until = absl::Now() + absl::Seconds(5);
  while (q->counter->attempts() == before && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(q->counter->attempts() - before, 1)
      << "queued by its first attempt, not after a refusal";
  // Under the id of the first wait, whose channel is still subscribed
  // (Wakeups::TakeIdleWaiterId()): no new channel to subscribe first.
  EXPECT_EQ(Keys(0, entries), first_entry);
  EXPECT_EQ(first_entry.size(), 1u);

  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = second.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(q->counter->attempts() - before, 1);
  EXPECT_EQ(q->counter->handed_over(), 2);
  ASSERT_TRUE(q->waiter->Release(*lock).ok());
}

// A "taken" heard after a "released" sends a woken waiter back to the poll
// the release had put off, not to a new poll delay: a stream of releases
// and takes faster than the poll cannot keep a waiter from ever trying.
// The messages here are published by the test itself (a stream of
// hand-overs between other clients would publish them too).
TEST_F(HandOffTest, ATakenHeardAfterAReleaseGoesBackToThePollItPutOff) {
  absl::StatusOr<Lock> held =
      holder_->Acquire("beat", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  auto counter = std::make_shared<AttemptCounter>();
  Options options = WaiterOptions(counter);
  options.retry.min_delay = absl::Milliseconds(300);
  options.retry.max_delay = absl::Milliseconds(300);
  options.retry.wake_jitter = absl::Milliseconds(250);
  std::unique_ptr<Redlock> waiter = MakeClient(std::move(options));
  ASSERT_NE(waiter, nullptr);
  Redlock* w = waiter.get();
  Background<absl::StatusOr<Lock>> waiting(
      [w] { return w->Acquire("beat", Waiting(absl::Seconds(30))); });
  ASSERT_TRUE(AwaitSubscribers("beat", 1));
  absl::SleepFor(absl::Milliseconds(100));

  // "released" then "taken" in one script: heard in one read, before a
  // woken waiter's jitter can end.
  const std::string key = LockKey(Options(), "beat");
  const int before = counter->attempts();
  const absl::Time end = absl::Now() + absl::Seconds(2);
  while (absl::Now() < end) {
    for (int i = 0; i < cluster_->size(); ++i) {
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok());
      ASSERT_TRUE((*client)
                      ->Command({"EVAL",
                                 "redis.call('publish', KEYS[1], 'released') "
                                 "redis.call('publish', KEYS[1], 'taken')",
                                 "1", key})
                      .ok());
    }
    absl::SleepFor(absl::Milliseconds(40));
  }
  // Polls every 300 ms: about six in 2 s. A poll put off by each "taken"
  // would leave none.
  EXPECT_GE(counter->attempts() - before, 3);

  ASSERT_TRUE(holder_->Release(*held).ok());
  absl::StatusOr<Lock> lock = waiting.Join();
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(waiter->Release(*lock).ok());
}

// Masters that disagree on who came first hand the lock to different
// waiters, none with a quorum. Each waiter handed a part tries again after
// successor_grace (100 ms here), and its loss gives its part back, which
// the masters hand on: one waiter holds the lock within a few graces, not
// at the next poll (30 s here).
TEST_F(HandOffTest, AHandOffSplitByDisagreeingQueuesIsSettledAfterTheGrace) {
  absl::StatusOr<Lock> held =
      holder_->Acquire("split", Waiting(absl::ZeroDuration()));
  ASSERT_TRUE(held.ok()) << held.status();
  std::vector<std::unique_ptr<Redlock>> waiters;
  std::vector<std::shared_ptr<AttemptCounter>> counters;
  // Each waiter, once it holds the lock, keeps it until `go`, then
  // releases it (handing it on); `holding` counts holders at once.
  std::vector<std::unique_ptr<Background<absl::Status>>> waiting;
  std::atomic<int> won{0};
  std::atomic<int> holding{0};
  std::atomic<int> most_holding{0};
  std::atomic<bool> go{false};
  for (int w = 0; w < 3; ++w) {
    counters.push_back(std::make_shared<AttemptCounter>());
    Options options = HandOffOptions(counters.back());
    options.retry.successor_grace = absl::Milliseconds(100);
    waiters.push_back(MakeClient(std::move(options)));
    ASSERT_NE(waiters.back(), nullptr);
    Redlock* client = waiters.back().get();
    waiting.push_back(std::make_unique<Background<absl::Status>>(
        [client, &won, &holding, &most_holding, &go]() -> absl::Status {
          absl::StatusOr<Lock> lock =
              client->Acquire("split", Waiting(absl::Seconds(60)));
          if (!lock.ok()) return lock.status();
          const int now = holding.fetch_add(1) + 1;
          int most = most_holding.load();
          while (now > most && !most_holding.compare_exchange_weak(most, now)) {
          }
          won.fetch_add(1);
          const absl::Time until = absl::Now() + absl::Seconds(30);
          while (!go.load() && absl::Now() < until) {
            absl::SleepFor(absl::Milliseconds(5));
          }
          holding.fetch_sub(1);
          return client->Release(*lock).status();
        }));
  }
  // All three queued with entries on every master.
  const std::string entries = WaiterHandOffKeyPrefix(Options(), "split") + "*";
  const absl::Time until = absl::Now() + absl::Seconds(10);
  bool queued = false;
  while (!queued && absl::Now() < until) {
    queued = true;
    for (int i = 0; i < cluster_->size(); ++i) {
      queued = queued && Count(i, entries) == 3;
    }
    if (!queued) absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_TRUE(queued);
  // Master i puts waiter ids[i] first.
  std::vector<std::string> ids;
  {
    auto client = cluster_->Client(0);
    ASSERT_TRUE(client.ok());
    auto members =
        (*client)->Command({"SMEMBERS", WriterWaitingKey(Options(), "split")});
    ASSERT_TRUE(members.ok());
    for (const auto& m : members->elements) ids.push_back(m.str);
  }
  ASSERT_EQ(ids.size(), 3u);
  for (int i = 0; i < cluster_->size(); ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    for (int k = 0; k < 3; ++k) {
      const std::string at = absl::StrCat(1000000 * (1 + (k - i + 3) % 3));
      ASSERT_TRUE(
          (*client)
              ->Command({"SET",
                         WaiterArrivalKeyPrefix(Options(), "split") + ids[k],
                         at, "KEEPTTL"})
              .ok());
    }
  }

  const absl::Time released = absl::Now();
  ASSERT_TRUE(holder_->Release(*held).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (won.load() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(won.load(), 1);
  EXPECT_LT(absl::Now() - released, kWokenWithin)
      << "settled at a poll, not after the grace";
  // Then each holder in turn releases, handing the lock on.
  go = true;
  for (auto& w : waiting) EXPECT_TRUE(w->Join().ok());
  EXPECT_EQ(won.load(), 3);
  EXPECT_EQ(most_holding.load(), 1);
}

}  // namespace
}  // namespace redlock
