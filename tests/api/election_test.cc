// Copyright 2026 The redlock Authors.
//
// Leader election on real masters: one leader at a time, each with an epoch
// larger than every earlier leader's; a leader that dies is followed within
// its lease plus the retry delay, one that resigns at once; leader() reports
// only what a quorum holds; observers hear every change in epoch order,
// late, behind a slow master, and never go back.

#include "redlock/election.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/fencing.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "tests/support/await_call.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::AwaitCall;
using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kElection[] = "scheduler";

// absl::Notification with std::mutex: ThreadSanitizer sees only std::mutex
// (Debian's Abseil is not built for it), and the loop thread notifies.
class Latch {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  bool WaitFor(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                        [this] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// What an observer heard, in order.
class Heard {
 public:
  void Add(const LeaderInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(info);
  }
  std::vector<LeaderInfo> Seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  // Waits up to `timeout` for a view with `value`.
  bool WaitFor(const std::string& value,
               absl::Duration timeout = absl::Seconds(10)) const {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      for (const LeaderInfo& info : Seen()) {
        if (info.value == value) return true;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

 private:
  mutable std::mutex mu_;
  std::vector<LeaderInfo> seen_;
};

// Every view strictly after the one before: (epoch, revision) increasing.
void ExpectInEpochOrder(const std::vector<LeaderInfo>& seen) {
  for (size_t i = 1; i < seen.size(); ++i) {
    const bool later = seen[i].epoch > seen[i - 1].epoch ||
                       (seen[i].epoch == seen[i - 1].epoch &&
                        seen[i].revision > seen[i - 1].revision);
    EXPECT_TRUE(later) << "view " << i << " (" << seen[i].epoch << "/"
                       << seen[i].revision << ") is not after ("
                       << seen[i - 1].epoch << "/" << seen[i - 1].revision
                       << ")";
  }
}

class ElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can stop";
    }
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  // Every client of one deployment shares its max_ttl.
  Options ClientOptions() const {
    Options options = TestOptions(cluster_->Uris());
    options.max_ttl = absl::Seconds(10);
    options.default_ttl = absl::Seconds(2);
    return options;
  }

  std::unique_ptr<Redlock> MakeClient(Options options) {
    auto client = Redlock::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::unique_ptr<Redlock> MakeClient() {
    auto client = Redlock::Create(ClientOptions());
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Runs each of `commands` on each of `masters`, directly.
  void OnMasters(const std::vector<int>& masters,
                 const std::vector<std::vector<std::string>>& commands) {
    for (int i : masters) {
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok()) << client.status();
      for (const std::vector<std::string>& argv : commands) {
        auto reply = (*client)->Command(argv);
        ASSERT_TRUE(reply.ok() && !reply->is_error())
            << (reply.ok() ? reply->DebugString() : reply.status().ToString());
      }
    }
  }

  // Deletes the lease on every master: as if it had expired everywhere.
  void DeleteLeaseEverywhere() {
    OnMasters({0, 1, 2, 3, 4},
              {{"DEL", ElectionLockKey(Options(), kElection)}});
  }

  // Writes a lease holding `token` and a record naming it on `masters`, by
  // hand (what no campaign of this test made).
  void WriteLease(const std::vector<int>& masters, const std::string& token,
                  const std::string& record) {
    OnMasters(
        masters,
        {{"SET", ElectionLockKey(Options(), kElection), token, "PX", "8000"},
         {"SET", ElectionRecordKey(Options(), kElection), record}});
  }

  std::unique_ptr<RedisCluster> cluster_;
};

TEST_F(ElectionTest, ACampaignLeadsWithItsFencingEpochAndLeaderReportsIt) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  absl::StatusOr<Leadership> lead = a->Campaign(kElection, "10.0.0.7:8080");
  ASSERT_TRUE(lead.ok()) << lead.status();
  EXPECT_TRUE(lead->valid());
  EXPECT_GT(lead->epoch(), 0u);
  EXPECT_EQ(lead->epoch(), lead->lock().fence());
  EXPECT_EQ(lead->revision(), 1u);
  EXPECT_EQ(lead->value(), "10.0.0.7:8080");

  auto observer = MakeClient();
  absl::StatusOr<LeaderInfo> leader = observer->Leader(kElection);
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->name, kElection);
  EXPECT_EQ(leader->value, "10.0.0.7:8080");
  EXPECT_EQ(leader->epoch, lead->epoch());
  EXPECT_EQ(leader->revision, 1u);

  // The lease is kept alive past its TTL.
  absl::SleepFor(absl::Seconds(3));
  EXPECT_TRUE(lead->valid()) << lead->lost_reason();
  leader = observer->Leader(kElection);
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->epoch, lead->epoch());

  absl::StatusOr<ReleaseReport> resigned = a->Resign(*lead);
  ASSERT_TRUE(resigned.ok()) << resigned.status();
  EXPECT_TRUE(resigned->freed);
  EXPECT_FALSE(lead->valid());
  EXPECT_TRUE(lead->resigned());
  EXPECT_TRUE(absl::IsNotFound(observer->Leader(kElection).status()));
}

TEST_F(ElectionTest, NoCampaignMeansNoLeaderAndTooFewMastersMeanUnknown) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  absl::StatusOr<LeaderInfo> none = client->Leader(kElection);
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();

  absl::StatusOr<Leadership> lead = client->Campaign(kElection, "a");
  ASSERT_TRUE(lead.ok()) << lead.status();
  // Three of five frozen: no quorum can agree on anything.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Stop().ok());
  auto late = MakeClient();
  absl::StatusOr<LeaderInfo> unknown = late->Leader(kElection);
  EXPECT_TRUE(absl::IsUnavailable(unknown.status())) << unknown.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Continue().ok());
}

TEST_F(ElectionTest, AMinorityOfMastersDownStillElectsAndReports) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  // The deployment is marked (its first client saw every master) before two
  // of them go: one killed, one frozen.
  absl::StatusOr<Leadership> before = a->Campaign(kElection, "before");
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(a->Resign(*before).ok());
  ASSERT_TRUE(cluster_->server(0).Kill().ok());
  ASSERT_TRUE(cluster_->server(1).Stop().ok());
  absl::StatusOr<Leadership> lead = a->Campaign(kElection, "a");
  ASSERT_TRUE(lead.ok()) << lead.status();
  absl::StatusOr<LeaderInfo> leader = MakeClient()->Leader(kElection);
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->epoch, lead->epoch());
  ASSERT_TRUE(cluster_->server(1).Continue().ok());
}

TEST_F(ElectionTest, AResignationHandsLeadershipToAWaitingCandidate) {
  auto a = MakeClient();
  // B polls every 20-30 s: only the release's message can elect it sooner.
  Options slow_polls = ClientOptions();
  slow_polls.retry.min_delay = absl::Seconds(20);
  slow_polls.retry.max_delay = absl::Seconds(30);
  auto b = MakeClient(slow_polls);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  absl::StatusOr<Leadership> first = a->Campaign(kElection, "a");
  ASSERT_TRUE(first.ok()) << first.status();

  absl::StatusOr<Leadership> second = absl::UnknownError("not yet");
  MonotonicTime second_won_at;
  Latch elected;
  std::thread candidate([&] {
    CampaignOptions options;
    options.wait = absl::Seconds(30);
    second = b->Campaign(kElection, "b", std::move(options));
    second_won_at = MonotonicClock::now();
    elected.Notify();
  });
  // B waits while A leads.
  EXPECT_FALSE(elected.WaitFor(absl::Seconds(1)));
  absl::StatusOr<LeaderInfo> leader = a->Leader(kElection);
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->value, "a");

  ASSERT_TRUE(a->Resign(*first).ok());
  // Woken by the release, not by its poll: well within B's lease.
  EXPECT_TRUE(elected.WaitFor(absl::Seconds(5)));
  candidate.join();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GT(second->epoch(), first->epoch());
  // B was elected after A's validity ended (at its resignation).
  EXPECT_GE(second_won_at, first->lock().valid_until());
  leader = a->Leader(kElection);
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->value, "b");
  EXPECT_EQ(leader->epoch, second->epoch());
}

TEST_F(ElectionTest, ALeaderThatDiesIsFollowedWithinItsLeaseAndNeverOverlaps) {
  // Three candidates; the leader's client is destroyed without resigning
  // (its lease is not released: it expires on the masters).
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  absl::StatusOr<Leadership> first = a->Campaign(kElection, "a");
  ASSERT_TRUE(first.ok()) << first.status();
  const MonotonicTime first_valid_until = first->lock().valid_until();

  std::vector<std::unique_ptr<Redlock>> others;
  others.push_back(MakeClient());
  others.push_back(MakeClient());
  std::vector<absl::StatusOr<Leadership>> won(2, absl::UnknownError("not yet"));
  std::vector<MonotonicTime> won_at(2);
  std::vector<Cancellation> cancels(2);
  std::atomic<int> leaders{0};
  std::vector<std::thread> candidates;
  for (int i = 0; i < 2; ++i) {
    candidates.emplace_back([&, i] {
      CampaignOptions options;
      options.wait = absl::Seconds(30);
      options.cancel = cancels[i];
      won[i] = others[i]->Campaign(kElection, i == 0 ? "b" : "c",
                                   std::move(options));
      won_at[i] = MonotonicClock::now();
      if (won[i].ok()) {
        ++leaders;
        // The other candidate stops once one leads.
        cancels[1 - i].Cancel();
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(300));
  const MonotonicTime died_at = MonotonicClock::now();
  // A's lease is first extended at ttl/3; whether or not that came, the
  // lease runs out at most a TTL after the client dies.
  a.reset();
  for (std::thread& t : candidates) t.join();
  ASSERT_EQ(leaders.load(), 1);
  const int next = won[0].ok() ? 0 : 1;
  const Leadership& second = *won[next];
  EXPECT_TRUE(absl::IsCancelled(won[1 - next].status()))
      << won[1 - next].status();
  EXPECT_GT(second.epoch(), first->epoch());
  // No two leaders whose validity overlaps: the next one was elected only
  // after the dead one's validity had ended.
  EXPECT_GE(won_at[next], first_valid_until);
  // Within the lease (2 s), its extension's margin and the retry delay: a
  // generous bound that proves it did not wait for something else.
  EXPECT_LT(won_at[next] - died_at,
            std::chrono::duration_cast<MonotonicClock::duration>(
                std::chrono::seconds(8)));
  absl::StatusOr<LeaderInfo> leader = others[next]->Leader(kElection);
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->epoch, second.epoch());
}

TEST_F(ElectionTest, ALeaderWhoseLeaseIsGoneLearnsItLostBeforeAnotherWrites) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  Latch lost;
  absl::Status why;
  CampaignOptions options;
  options.on_lost = [&](const absl::Status& status) {
    why = status;
    lost.Notify();
  };
  absl::StatusOr<Leadership> first =
      a->Campaign(kElection, "a", std::move(options));
  ASSERT_TRUE(first.ok()) << first.status();

  // The lease vanishes on every master (as if it had expired while A was
  // paused): A's next extension fails and A is told.
  DeleteLeaseEverywhere();
  ASSERT_TRUE(lost.WaitFor(absl::Seconds(10)));
  EXPECT_FALSE(why.ok());
  EXPECT_TRUE(first->lost());
  EXPECT_FALSE(first->valid());
  EXPECT_TRUE(absl::IsFailedPrecondition(a->Proclaim(*first, "again")));

  auto b = MakeClient();
  absl::StatusOr<Leadership> second = b->Campaign(kElection, "b");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GT(second->epoch(), first->epoch());

  // A resource that checks the epoch keeps B's write and rejects A's.
  auto store = cluster_->Client(0);
  ASSERT_TRUE(store.ok()) << store.status();
  auto write = [&](uint64_t epoch, const std::string& value) {
    auto reply = (*store)->Command(
        FencedSetArgv("jobs:fence", "jobs:owner", epoch, value));
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->integer : -1;
  };
  EXPECT_EQ(write(second->epoch(), "b"), 1);
  EXPECT_EQ(write(first->epoch(), "a"), 0);
  auto owner = (*store)->Get("jobs:owner");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ(**owner, "b");
  EXPECT_TRUE(a->Resign(*first).ok());
}

TEST_F(ElectionTest, ObserversHearEveryLeaderAndValueInEpochOrder) {
  auto watcher = MakeClient();
  ASSERT_NE(watcher, nullptr);
  Heard heard;
  ObserveOptions watch;
  watch.on_leader = [&](const LeaderInfo& info) { heard.Add(info); };
  // Polls rarely: the masters' messages must do the waking.
  watch.poll_every = absl::Seconds(30);
  absl::StatusOr<ObserveHandle> handle =
      watcher->Observe(kElection, std::move(watch));
  ASSERT_TRUE(handle.ok()) << handle.status();

  auto a = MakeClient();
  auto b = MakeClient();
  absl::StatusOr<Leadership> first = a->Campaign(kElection, "a");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(heard.WaitFor("a"));
  ASSERT_TRUE(a->Proclaim(*first, "a2").ok());
  EXPECT_EQ(first->revision(), 2u);
  EXPECT_EQ(first->value(), "a2");
  ASSERT_TRUE(heard.WaitFor("a2"));
  ASSERT_TRUE(a->Resign(*first).ok());
  absl::StatusOr<Leadership> second = b->Campaign(kElection, "b");
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(heard.WaitFor("b"));
  handle->Stop();

  const std::vector<LeaderInfo> seen = heard.Seen();
  ExpectInEpochOrder(seen);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].epoch, first->epoch());
  EXPECT_EQ(seen[0].revision, 1u);
  EXPECT_EQ(seen[1].epoch, first->epoch());
  EXPECT_EQ(seen[1].revision, 2u);
  EXPECT_EQ(seen[2].epoch, second->epoch());

  // Nothing after Stop().
  ASSERT_TRUE(b->Proclaim(*second, "b2").ok());
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(heard.Seen().size(), 3u);
}

TEST_F(ElectionTest, AnObserverMayStopItselfFromItsOwnCallback) {
  auto a = MakeClient();
  auto watcher = MakeClient();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(watcher, nullptr);
  absl::StatusOr<Leadership> lead = a->Campaign(kElection, "a");
  ASSERT_TRUE(lead.ok()) << lead.status();

  std::mutex mu;
  std::optional<ObserveHandle> handle;  // Guarded by mu.
  std::atomic<int> calls{0};
  Latch stopped;
  ObserveOptions watch;
  watch.on_leader = [&](const LeaderInfo&) {
    ++calls;
    std::lock_guard<std::mutex> lock(mu);
    if (!handle.has_value()) return;  // Told before the handle was kept.
    handle->Stop();                   // On the client's loop thread.
    stopped.Notify();
  };
  absl::StatusOr<ObserveHandle> made =
      watcher->Observe(kElection, std::move(watch));
  ASSERT_TRUE(made.ok()) << made.status();
  {
    std::lock_guard<std::mutex> lock(mu);
    handle = *std::move(made);
  }
  // A new value makes a call that finds the handle.
  ASSERT_TRUE(a->Proclaim(*lead, "a2").ok());
  ASSERT_TRUE(stopped.WaitFor(absl::Seconds(10)));
  const int told = calls.load();
  ASSERT_TRUE(a->Proclaim(*lead, "a3").ok());
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(calls.load(), told) << "told after Stop()";
  // The client still answers (its loop was not left waiting for itself).
  EXPECT_TRUE(watcher->Leader(kElection).ok());
}

TEST_F(ElectionTest, AnObserverThatJoinsLateHearsTheCurrentLeaderFirst) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  absl::StatusOr<Leadership> lead = a->Campaign(kElection, "a");
  ASSERT_TRUE(lead.ok()) << lead.status();
  ASSERT_TRUE(a->Proclaim(*lead, "a2").ok());

  auto late = MakeClient();
  Heard heard;
  ObserveOptions watch;
  watch.on_leader = [&](const LeaderInfo& info) { heard.Add(info); };
  watch.poll_every = absl::Milliseconds(100);
  absl::StatusOr<ObserveHandle> handle =
      late->Observe(kElection, std::move(watch));
  ASSERT_TRUE(handle.ok()) << handle.status();
  ASSERT_TRUE(heard.WaitFor("a2"));
  // Several polls later: still the one view, never told again.
  absl::SleepFor(absl::Milliseconds(800));
  const std::vector<LeaderInfo> seen = heard.Seen();
  ASSERT_EQ(seen.size(), 1u);  // The current view, not the history.
  EXPECT_EQ(seen[0].epoch, lead->epoch());
  EXPECT_EQ(seen[0].revision, 2u);
}

TEST_F(ElectionTest, AnObserverBehindAFrozenMasterStillHearsChanges) {
  auto watcher = MakeClient();
  ASSERT_NE(watcher, nullptr);
  auto a = MakeClient();
  absl::StatusOr<Leadership> first = a->Campaign(kElection, "a");
  ASSERT_TRUE(first.ok()) << first.status();
  // One master frozen: its replies never come (each read waits at most
  // request_timeout for it, or not at all once a quorum agrees).
  ASSERT_TRUE(cluster_->server(4).Stop().ok());
  Heard heard;
  ObserveOptions watch;
  watch.on_leader = [&](const LeaderInfo& info) { heard.Add(info); };
  watch.poll_every = absl::Milliseconds(200);
  absl::StatusOr<ObserveHandle> handle =
      watcher->Observe(kElection, std::move(watch));
  ASSERT_TRUE(handle.ok()) << handle.status();
  ASSERT_TRUE(heard.WaitFor("a"));
  ASSERT_TRUE(a->Resign(*first).ok());
  absl::StatusOr<Leadership> second = a->Campaign(kElection, "b");
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(heard.WaitFor("b"));
  ExpectInEpochOrder(heard.Seen());
  ASSERT_TRUE(cluster_->server(4).Continue().ok());
}

TEST_F(ElectionTest, AProclamationWhereTheLeaseIsGoneIsRefused) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  CampaignOptions options;
  options.ttl = absl::Seconds(6);  // No extension comes during the test.
  absl::StatusOr<Leadership> lead =
      a->Campaign(kElection, "a", std::move(options));
  ASSERT_TRUE(lead.ok()) << lead.status();
  DeleteLeaseEverywhere();
  // The leader has not noticed yet; the masters refuse its record.
  absl::Status proclaimed = a->Proclaim(*lead, "a2");
  EXPECT_TRUE(absl::IsAborted(proclaimed)) << proclaimed;
  EXPECT_EQ(lead->revision(), 1u);
  EXPECT_EQ(lead->value(), "a");
  EXPECT_TRUE(absl::IsNotFound(a->Leader(kElection).status()));
}

TEST_F(ElectionTest, ALeaseOnAMinorityOfMastersIsNoLeader) {
  // A lease and its record written by hand on two of five masters (what a
  // campaign that lost leaves until its clean-up, or a forged copy).
  WriteLease({0, 1}, "minority", "7 1 minority usurper");
  auto reader = MakeClient();
  ASSERT_NE(reader, nullptr);
  absl::StatusOr<LeaderInfo> leader = reader->Leader(kElection);
  // Three say no lease: nobody leads.
  EXPECT_TRUE(absl::IsNotFound(leader.status())) << leader.status();
}

TEST_F(ElectionTest, AMasterThatRestartedEmptyIsNotCountedAsSayingNoLeader) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  // The deployment is marked while every master is up.
  absl::StatusOr<Leadership> warm = a->Campaign(kElection, "warm");
  ASSERT_TRUE(warm.ok()) << warm.status();
  ASSERT_TRUE(a->Resign(*warm).ok());
  // Elected on masters 0-2 alone (3 and 4 frozen), for a lease that needs
  // no extension during the test.
  ASSERT_TRUE(cluster_->server(3).Stop().ok());
  ASSERT_TRUE(cluster_->server(4).Stop().ok());
  CampaignOptions options;
  options.ttl = absl::Seconds(8);
  absl::StatusOr<Leadership> lead =
      a->Campaign(kElection, "a", std::move(options));
  ASSERT_TRUE(lead.ok()) << lead.status();
  ASSERT_TRUE(cluster_->server(3).Continue().ok());
  ASSERT_TRUE(cluster_->server(4).Continue().ok());
  // The campaign's writes were still queued to them and ran on waking:
  // undone, as if they had never arrived.
  absl::SleepFor(absl::Milliseconds(300));
  OnMasters({3, 4}, {{"DEL", ElectionLockKey(Options(), kElection),
                      ElectionRecordKey(Options(), kElection)}});
  // Master 0 comes back empty: it says "no lease", but it lost what it
  // knew. Two trusted masters hold the lease, two trusted ones none: unknown.
  ASSERT_TRUE(cluster_->server(0).Restart().ok());
  auto reader = MakeClient();
  ASSERT_NE(reader, nullptr);
  absl::StatusOr<LeaderInfo> leader = reader->Leader(kElection);
  EXPECT_TRUE(absl::IsUnavailable(leader.status())) << leader.status();
}

TEST_F(ElectionTest, LeasesOnMastersHeldBackByTheGuardDoNotMakeALeader) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  absl::StatusOr<Leadership> warm = a->Campaign(kElection, "warm");
  ASSERT_TRUE(warm.ok()) << warm.status();
  ASSERT_TRUE(a->Resign(*warm).ok());
  // Masters 0 and 1 restart empty: held back for max_ttl. A lease and its
  // record then appear on them and on master 2 (written by hand: whatever
  // put them there, two of the three are not to be trusted yet).
  ASSERT_TRUE(cluster_->server(0).Restart().ok());
  ASSERT_TRUE(cluster_->server(1).Restart().ok());
  WriteLease({0, 1, 2}, "copied", "9 1 copied usurper");
  auto reader = MakeClient();
  ASSERT_NE(reader, nullptr);
  absl::StatusOr<LeaderInfo> leader = reader->Leader(kElection);
  EXPECT_TRUE(absl::IsUnavailable(leader.status())) << leader.status();
}

TEST_F(ElectionTest, BadInputIsRefusedNamingWhatIsWrong) {
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  absl::StatusOr<Leadership> empty = client->Campaign("", "v");
  EXPECT_TRUE(absl::IsInvalidArgument(empty.status())) << empty.status();
  EXPECT_NE(empty.status().message().find("name"), absl::string_view::npos);
  const std::string big(kMaxElectionValueSize + 1, 'x');
  absl::StatusOr<Leadership> too_big = client->Campaign(kElection, big);
  EXPECT_TRUE(absl::IsInvalidArgument(too_big.status()));
  EXPECT_NE(too_big.status().message().find("value"), absl::string_view::npos);
  CampaignOptions short_lease;
  short_lease.ttl = absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(
      client->Campaign(kElection, "v", std::move(short_lease)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(client->Proclaim(Leadership(), "v")));
  EXPECT_TRUE(absl::IsInvalidArgument(client->Resign(Leadership()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(client->Leader("").status()));
  ObserveOptions no_callback;
  EXPECT_TRUE(absl::IsInvalidArgument(
      client->Observe(kElection, std::move(no_callback)).status()));
  ObserveOptions no_poll;
  no_poll.on_leader = [](const LeaderInfo&) {};
  no_poll.poll_every = absl::ZeroDuration();
  EXPECT_TRUE(absl::IsInvalidArgument(
      client->Observe(kElection, std::move(no_poll)).status()));

  absl::StatusOr<Leadership> lead = client->Campaign(kElection, "v");
  ASSERT_TRUE(lead.ok()) << lead.status();
  ASSERT_TRUE(client->Resign(*lead).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(client->Resign(*lead).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(client->Proclaim(*lead, "w")));
  // An election's lease is not a resource users may lock by name.
  EXPECT_TRUE(absl::IsInvalidArgument(
      client->TryAcquire(ElectionResource(kElection), absl::Seconds(2))
          .status()));
}

TEST_F(ElectionTest, ACancelledCampaignGivesUpAndLeavesNoLease) {
  auto a = MakeClient();
  auto b = MakeClient();
  ASSERT_NE(a, nullptr);
  absl::StatusOr<Leadership> first = a->Campaign(kElection, "a");
  ASSERT_TRUE(first.ok()) << first.status();
  Cancellation cancel;
  absl::StatusOr<Leadership> second = absl::UnknownError("not yet");
  std::thread candidate([&] {
    CampaignOptions options;
    options.cancel = cancel;  // Waits until elected, or cancelled.
    second = b->Campaign(kElection, "b", std::move(options));
  });
  absl::SleepFor(absl::Milliseconds(300));
  cancel.Cancel();
  candidate.join();
  EXPECT_TRUE(absl::IsCancelled(second.status())) << second.status();
  ASSERT_TRUE(a->Resign(*first).ok());
  EXPECT_TRUE(absl::IsNotFound(a->Leader(kElection).status()));
}

TEST_F(ElectionTest, TheAsyncClientCampaignsProclaimsObservesAndResigns) {
  LoopRunner loop;
  auto engine = AsyncRedlock::Create(loop.base(), ClientOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  AsyncRedlock& client = **engine;

  std::vector<LeaderInfo> seen;
  ObserveOptions watch;
  watch.on_leader = [&](const LeaderInfo& info) { seen.push_back(info); };
  absl::StatusOr<ObserveHandle> handle =
      client.Observe(kElection, std::move(watch));
  ASSERT_TRUE(handle.ok()) << handle.status();

  // AwaitCall checks the callback runs once, never before the call returns.
  absl::StatusOr<Leadership> lead =
      AwaitCall<absl::StatusOr<Leadership>>(loop, [&](auto done) {
        return client.CampaignAsync(kElection, "async", CampaignOptions(),
                                    std::move(done));
      });
  ASSERT_TRUE(lead.ok()) << lead.status();
  ASSERT_TRUE(loop.RunUntil([&] { return !seen.empty(); }));
  EXPECT_EQ(seen.back().value, "async");

  absl::Status proclaimed = AwaitCall<absl::Status>(loop, [&](auto done) {
    return client.ProclaimAsync(*lead, "async2", std::move(done));
  });
  EXPECT_TRUE(proclaimed.ok()) << proclaimed;
  ASSERT_TRUE(loop.RunUntil([&] { return seen.back().value == "async2"; }));

  absl::StatusOr<LeaderInfo> leader =
      AwaitCall<absl::StatusOr<LeaderInfo>>(loop, [&](auto done) {
        return client.LeaderAsync(kElection, std::move(done));
      });
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(leader->revision, 2u);

  absl::StatusOr<ReleaseReport> resigned =
      AwaitCall<absl::StatusOr<ReleaseReport>>(loop, [&](auto done) {
        return client.ResignAsync(*lead, std::move(done));
      });
  EXPECT_TRUE(resigned.ok() && resigned->freed);
  handle->Stop();
  loop.RunFor(absl::Milliseconds(50));
  ExpectInEpochOrder(seen);
}

TEST_F(ElectionTest,
       DestroyingTheClientEndsAWaitingCampaignOnceAndStopsWatching) {
  auto a = MakeClient();
  ASSERT_NE(a, nullptr);
  absl::StatusOr<Leadership> first = a->Campaign(kElection, "a");
  ASSERT_TRUE(first.ok()) << first.status();

  LoopRunner loop;
  auto engine = AsyncRedlock::Create(loop.base(), ClientOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  int campaign_calls = 0;
  absl::Status campaign_status;
  ASSERT_TRUE((*engine)
                  ->CampaignAsync(kElection, "b", CampaignOptions(),
                                  [&](absl::StatusOr<Leadership> lead) {
                                    ++campaign_calls;
                                    campaign_status = lead.status();
                                  })
                  .ok());
  int views = 0;
  ObserveOptions watch;
  watch.on_leader = [&](const LeaderInfo&) { ++views; };
  absl::StatusOr<ObserveHandle> handle =
      (*engine)->Observe(kElection, std::move(watch));
  ASSERT_TRUE(handle.ok()) << handle.status();
  absl::StatusOr<LeaderInfo> leader =
      AwaitCall<absl::StatusOr<LeaderInfo>>(loop, [&](auto done) {
        return (*engine)->LeaderAsync(kElection, std::move(done));
      });
  EXPECT_TRUE(leader.ok()) << leader.status();
  ASSERT_TRUE(loop.RunUntil([&] { return views == 1; }));
  loop.RunFor(absl::Milliseconds(200));  // The campaign waits.
  EXPECT_EQ(campaign_calls, 0);
  engine->reset();
  EXPECT_EQ(campaign_calls, 1);
  EXPECT_TRUE(absl::IsCancelled(campaign_status)) << campaign_status;
  handle->Stop();  // The engine is gone: does nothing.
  loop.RunFor(absl::Milliseconds(50));
  EXPECT_EQ(campaign_calls, 1);
  EXPECT_EQ(views, 1);
  ASSERT_TRUE(a->Resign(*first).ok());
}

}  // namespace
}  // namespace redlock
