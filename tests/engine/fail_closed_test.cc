// Copyright 2026 The redlock Authors.
//
// Fail closed: a grant counts only from a master this client has judged
// trustworthy, and nothing the client does can leave a second owner in or a
// key behind. Each test here failed on the code before the rule (the scene it
// replays let a second owner in, or left a key), on real redis-server
// processes with faults from signals, restarts and the fault proxy.

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "src/algorithm/scripts.h"
#include "tests/support/await_call.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/guard_expectations.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kJob[] = "job";

// StartCluster() may skip the test (external masters); GTEST_SKIP() in a
// helper only leaves the helper.
#define START_CLUSTER(n)                            \
  do {                                              \
    StartCluster(n);                                \
    if (IsSkipped() || cluster_ == nullptr) return; \
  } while (0)

class FailClosedTest : public ::testing::Test {
 protected:
  void StartCluster(int n) {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can restart and stop";
    }
    auto cluster = RedisCluster::Start(n, {});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  FaultProxy& AddProxy(int master) {
    auto proxy =
        FaultProxy::Start({.upstream_port = cluster_->server(master).port()});
    EXPECT_TRUE(proxy.ok()) << proxy.status();
    proxies_.push_back(*std::move(proxy));
    return *proxies_.back();
  }

  std::unique_ptr<Redlock> MakeClient(std::vector<std::string> masters) {
    auto client = Redlock::Create(TestOptions(std::move(masters)));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::optional<std::string> Value(int master, const std::string& key) {
    return testing::ValueOn(*cluster_, master, key);
  }

  void Set(int master, const std::string& key, const std::string& value) {
    auto client = cluster_->Client(master);
    ASSERT_TRUE(client.ok()) << client.status();
    auto reply = (*client)->Command({"SET", key, value, "PX", "30000"});
    ASSERT_TRUE(reply.ok()) << reply.status();
  }

  void Del(int master, const std::string& key) {
    auto client = cluster_->Client(master);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE((*client)->Command({"DEL", key}).ok());
  }

  // A master restarted less than about 2s after the deployment was marked
  // cannot be told from one that only missed the marking (INFO reports
  // uptime in whole seconds): let the deployment age past that.
  static void AgePastUptimeResolution() {
    absl::SleepFor(absl::Milliseconds(2200));
  }

  // Polls `done` for up to five seconds.
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (!done()) {
      if (absl::Now() >= deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }

  static bool Mentions(const absl::Status& status, absl::string_view text) {
    return absl::StrContains(status.message(), text);
  }

  // The report's scene on three fresh masters: X holds kJob for 60s on all
  // three, then masters 2 and 3 restart without their data. X's client is
  // gone by then (X's process goes on working): a live client would mark the
  // restarted masters "reborn" on reconnecting, and no rule may rely on that.
  absl::StatusOr<Lock> HoldOnThreeThenRestartTwoEmpty() {
    absl::StatusOr<Lock> held =
        MakeClient(cluster_->Uris())->TryAcquire(kJob, absl::Seconds(60));
    if (!held.ok()) return held.status();
    AgePastUptimeResolution();
    for (int i : {1, 2}) {
      if (absl::Status s = cluster_->server(i).Restart(); !s.ok()) return s;
    }
    return held;
  }

  std::unique_ptr<RedisCluster> cluster_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
};

// The scene of the report: X holds the job on three masters; masters 2 and 3
// restart without their data; master 1, the only one that remembers X, is
// stopped. A client that starts now hears only the two empty masters: it has
// no marked master to compare their uptime with, so it must not count them.
TEST_F(FailClosedTest, WithNoMarkedMasterReachableEmptyMastersCastNoGrant) {
  START_CLUSTER(3);
  absl::StatusOr<Lock> held = HoldOnThreeThenRestartTwoEmpty();
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(cluster_->server(0).Stop().ok());

  auto y = MakeClient(cluster_->Uris());
  absl::StatusOr<Lock> second = y->TryAcquire(kJob, absl::Seconds(60));
  ASSERT_TRUE(cluster_->server(0).Continue().ok());
  ASSERT_FALSE(second.ok()) << "two owners: X still holds the lock";
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
  EXPECT_TRUE(Mentions(second.status(), "restart guard: not yet judged"))
      << second.status();
  EXPECT_TRUE(held->valid());
  // Nothing left behind by the refused attempt: the two empty masters were
  // cleaned up.
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(Value(1, held->key()), std::nullopt);
  EXPECT_EQ(Value(2, held->key()), std::nullopt);
}

// The same scene with master 1 only slow: its handshake answers after the
// new client stopped waiting for the deployment. Until it answers the empty
// masters are unjudged; once it has, they still cast no grant: one member of
// three carries the membership record, so the client cannot know it is
// current, and writes it nowhere (docs/design.md, "A record is acted on only
// when it is known to be current").
TEST_F(FailClosedTest, WithTheMarkedMasterSlowEmptyMastersCastNoGrant) {
  START_CLUSTER(3);
  absl::StatusOr<Lock> held = HoldOnThreeThenRestartTwoEmpty();
  ASSERT_TRUE(held.ok()) << held.status();
  // TestOptions wait 500ms + 2 * 300ms for every handshake: answer later.
  FaultProxy& slow = AddProxy(0);
  slow.SetLatency(absl::Milliseconds(700), absl::Milliseconds(700));

  auto y = MakeClient(
      {slow.Uri(), cluster_->server(1).Uri(), cluster_->server(2).Uri()});
  absl::StatusOr<Lock> first = y->TryAcquire(kJob, absl::Seconds(60));
  ASSERT_FALSE(first.ok()) << "two owners: X still holds the lock";
  EXPECT_TRUE(Mentions(first.status(), "restart guard: not yet judged"))
      << first.status();
  // Master 1 answers: still no grant from the empty masters.
  ASSERT_TRUE(Eventually([&] { return y->Health()[0].connected; }));
  absl::StatusOr<Lock> later = y->TryAcquire(kJob, absl::Seconds(60));
  ASSERT_FALSE(later.ok()) << "two owners: X still holds the lock";
  EXPECT_TRUE(Mentions(later.status(), "not known to be current"))
      << later.status();
  EXPECT_TRUE(held->valid());
  // Nothing was written onto them.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(Value(1, DeploymentMarkerKey(TestOptions({}))), std::nullopt);
  EXPECT_EQ(Value(2, DeploymentMarkerKey(TestOptions({}))), std::nullopt);
}

// A long-lived client that has seen the markers keeps trying while two
// masters come back empty. Its commands queue behind each new connection's
// handshake, so the SET's reply arrives after the handshake but before the
// "reborn" marker written behind it: the master is not judged yet and its
// grant must not count.
TEST_F(FailClosedTest, AReconnectingClientDoesNotCountAMasterBeforeJudgingIt) {
  START_CLUSTER(3);
  // Slow links to masters 2 and 3 keep each reconnect's handshake in flight
  // long enough for attempts to queue behind it.
  FaultProxy& p1 = AddProxy(1);
  FaultProxy& p2 = AddProxy(2);
  p1.SetLatency(absl::Milliseconds(150), absl::Milliseconds(150));
  p2.SetLatency(absl::Milliseconds(150), absl::Milliseconds(150));
  Options slow = TestOptions({cluster_->server(0).Uri(), p1.Uri(), p2.Uri()});
  slow.request_timeout = absl::Seconds(1);
  slow.connect_timeout = absl::Seconds(1);
  auto created = Redlock::Create(slow);
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<Redlock> y = *std::move(created);
  ASSERT_TRUE(y->TryAcquire("warmup", absl::Seconds(2)).ok());

  auto x = MakeClient(cluster_->Uris());
  absl::StatusOr<Lock> held = x->TryAcquire(kJob, absl::Seconds(60));
  ASSERT_TRUE(held.ok()) << held.status();
  x.reset();  // As above: no other client marks the restarted masters.
  AgePastUptimeResolution();

  // Masters 2 and 3 crash and restart together (their reconnects'
  // handshakes overlap) while Y keeps trying from another thread. (The
  // restarts stay on this thread: the fixture ties a server's life to the
  // thread that started it.)
  std::atomic<bool> restarted{false};
  std::atomic<bool> double_grant{false};
  int attempts = 0;
  int unjudged = 0;
  std::thread trying([&] {
    // Until two seconds after both came back.
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    absl::Time end = absl::InfiniteFuture();
    while (absl::Now() < std::min(end, give_up) && !double_grant) {
      if (restarted && end == absl::InfiniteFuture()) {
        end = absl::Now() + absl::Seconds(2);
      }
      absl::StatusOr<Lock> second = y->TryAcquire(kJob, absl::Seconds(60));
      if (second.ok()) double_grant = true;
      ++attempts;
      // The restart guard's words, or the membership's (a reborn master
      // has lost its membership record with its marker; with two of three
      // empty, no client can know the survivor's record is current).
      unjudged += Mentions(second.status(),
                           "not yet judged (its deployment "
                           "marker is being written or read)") ||
                  Mentions(second.status(),
                           "not yet judged (no membership record while "
                           "other masters carry one; it is being written)") ||
                  Mentions(second.status(), "not known to be current");
    }
  });
  absl::Status restart_status[2];
  // Both die first, so that both come back within moments of each other.
  for (int i : {1, 2}) cluster_->server(i).Kill().IgnoreError();
  restart_status[0] = cluster_->server(1).Restart();
  restart_status[1] = cluster_->server(2).Restart();
  restarted = true;
  trying.join();
  ASSERT_FALSE(double_grant)
      << "two owners after " << attempts << " attempts: X still holds the lock";
  ASSERT_TRUE(restart_status[0].ok()) << restart_status[0];
  ASSERT_TRUE(restart_status[1].ok()) << restart_status[1];
  // The scene really happened: replies came back from a master whose
  // "reborn" marker was still queued behind the SET, and were refused.
  EXPECT_GT(unjudged, 0) << attempts << " attempts";
  EXPECT_TRUE(held->valid());
}

// One server under two addresses (here a proxy; in production an
// IPv4-mapped address, a second IP or a DNS alias) is one failure domain: its
// second address casts no vote, or a lock held on one server of two would
// extend as if a quorum held it.
TEST_F(FailClosedTest, OneServerUnderTwoAddressesCastsOneVote) {
  START_CLUSTER(2);
  FaultProxy& alias = AddProxy(0);
  auto client = MakeClient(
      {cluster_->server(0).Uri(), alias.Uri(), cluster_->server(1).Uri()});
  absl::StatusOr<Lock> lock = client->TryAcquire(kJob, absl::Seconds(30));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Master 3 forgets the lock: it is now held on one server of two.
  Del(1, lock->key());
  absl::Status extended = client->Extend(*lock, absl::Seconds(30));
  EXPECT_FALSE(extended.ok()) << "extended on one server of two";
  const std::vector<MasterHealth> health = client->Health();
  ASSERT_EQ(health.size(), 3u);
  EXPECT_TRUE(health[0].grants_count.ok()) << health[0].grants_count;
  EXPECT_EQ(health[1].grants_count.code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Mentions(health[1].grants_count, "same server as master 1"))
      << health[1].grants_count;
}

// The same with the lock kept alive: a batched extension judges a chunk's
// reply once per master (KeepAliveBatcher::Judged), and the second
// address's grant must still cast no vote. Held on one server of two, the
// lock is lost at its next extension.
TEST_F(FailClosedTest, ABatchedExtensionCountsOneServerUnderTwoAddressesOnce) {
  START_CLUSTER(2);
  FaultProxy& alias = AddProxy(0);
  LoopRunner loop;
  auto engine = AsyncRedlock::Create(
      loop.base(), TestOptions({cluster_->server(0).Uri(), alias.Uri(),
                                cluster_->server(1).Uri()}));
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Lock> lock = testing::AwaitAcquire(
      loop, **engine, kJob, absl::Seconds(10), absl::ZeroDuration());
  ASSERT_TRUE(lock.ok()) << lock.status();
  Del(1, lock->key());
  testing::KeptAlive kept = testing::StartKeepAlive(
      **engine, *lock, absl::Seconds(10), absl::Milliseconds(100));
  ASSERT_TRUE(kept.keeper.ok()) << kept.keeper.status();
  std::optional<absl::Status> lost = testing::AwaitLoss(loop, kept);
  ASSERT_TRUE(lost.has_value()) << "kept alive on one server of two";
  EXPECT_TRUE(Mentions(*lost, "same server as")) << *lost;
  kept.keeper->Stop(/*release=*/true);
}

// A master the client judged before is not judged while it is away: its
// connection is gone, and whatever answers next on that address must be
// judged again.
TEST_F(FailClosedTest, ADisconnectedMasterIsNotJudgedUntilItsNextHandshake) {
  START_CLUSTER(3);
  auto client = MakeClient(cluster_->Uris());
  ASSERT_TRUE(client->TryAcquire("warmup", absl::Seconds(1)).ok());
  // The warm-up decided at quorum; master 3's marker reply may still be on
  // its way.
  ASSERT_TRUE(Eventually([&] { return client->Health()[2].grants_count.ok(); }))
      << client->Health()[2].grants_count;
  ASSERT_TRUE(cluster_->server(2).Kill().ok());
  ASSERT_TRUE(Eventually([&] { return !client->Health()[2].connected; }));
  const MasterHealth away = client->Health()[2];
  ASSERT_FALSE(away.connected);
  EXPECT_EQ(away.grants_count.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Mentions(away.grants_count, "not yet judged"))
      << away.grants_count;
}

// A keep-alive that declared its lock lost still owns what the masters hold:
// stopping (or destroying) its handle releases it instead of leaving the
// token there for a whole TTL.
TEST_F(FailClosedTest, AKeepAliveHandleStoppedAfterTheLossReleasesTheRest) {
  START_CLUSTER(3);
  LoopRunner loop;
  Options options = TestOptions(cluster_->Uris());
  auto engine = AsyncRedlock::Create(loop.base(), options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Lock> lock = testing::AwaitAcquire(
      loop, **engine, kJob, absl::Seconds(10), absl::ZeroDuration());
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Another owner took masters 2 and 3 (as after an expiry).
  Set(1, lock->key(), "someone-else");
  Set(2, lock->key(), "someone-else");
  testing::KeptAlive kept = testing::StartKeepAlive(
      **engine, *lock, absl::Seconds(10), absl::Milliseconds(100));
  ASSERT_TRUE(kept.keeper.ok()) << kept.keeper.status();
  std::optional<absl::Status> lost = testing::AwaitLoss(loop, kept);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->code(), absl::StatusCode::kAborted) << *lost;
  EXPECT_EQ(Value(0, lock->key()), lock->token());

  { KeepAliveHandle gone = *std::move(kept.keeper); }
  loop.RunFor(absl::Milliseconds(200));
  EXPECT_EQ(Value(0, lock->key()), std::nullopt) << "our token was left";
  EXPECT_EQ(Value(1, lock->key()), "someone-else");
  EXPECT_EQ(Value(2, lock->key()), "someone-else");
}

// When extensions hang (every master frozen), the lost signal comes a safety
// margin before validity ends, not when the extension finally times out or
// validity is already gone.
TEST_F(FailClosedTest, TheLostSignalComesASafetyMarginBeforeValidityEnds) {
  START_CLUSTER(3);
  LoopRunner loop;
  auto engine =
      AsyncRedlock::Create(loop.base(), TestOptions(cluster_->Uris()));
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Lock> lock = testing::AwaitAcquire(
      loop, **engine, kJob, absl::Seconds(2), absl::ZeroDuration());
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Safety margin: max(ttl / 10, 2 * request_timeout) = 600ms. The
  // extension goes out at 1.3s and would time out at 1.6s; validity ends
  // at about 1.98s, so the margin is reached first, at about 1.38s.
  std::optional<absl::Status> lost;
  absl::Duration left_when_lost;
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(1300);
  hold.on_lost = [&](const absl::Status& reason) {
    lost = reason;
    left_when_lost = lock->remaining();
  };
  absl::StatusOr<KeepAliveHandle> keeper =
      (*engine)->KeepAlive(*lock, absl::Seconds(2), std::move(hold));
  ASSERT_TRUE(keeper.ok()) << keeper.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Stop().ok());
  const bool signalled =
      loop.RunUntil([&] { return lost.has_value(); }, absl::Seconds(5));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Continue().ok());
  ASSERT_TRUE(signalled);
  EXPECT_EQ(lost->code(), absl::StatusCode::kDeadlineExceeded) << *lost;
  EXPECT_TRUE(Mentions(*lost, "safety margin")) << *lost;
  EXPECT_GT(left_when_lost, absl::ZeroDuration());
  keeper->Stop(/*release=*/false);
}

// After SCRIPT FLUSH a fenced acquire answered NOSCRIPT must not be re-sent
// behind the clean-up release of the round it lost: run after the release,
// it would leave its key for a whole TTL.
TEST_F(FailClosedTest, ANoscriptAcquireIsNotResentBehindItsCleanUpRelease) {
  START_CLUSTER(3);
  FaultProxy& slow = AddProxy(0);
  auto client = MakeClient(
      {slow.Uri(), cluster_->server(1).Uri(), cluster_->server(2).Uri()});
  ASSERT_TRUE(client->TryAcquire("warmup", absl::Seconds(1)).ok());
  const std::string key = LockKey(client->options(), kJob);
  // Another owner holds masters 2 and 3: the round is lost as soon as they
  // deny, while master 1's reply is still on its way.
  Set(1, key, "someone-else");
  Set(2, key, "someone-else");
  {
    auto direct = cluster_->Client(0);
    ASSERT_TRUE(direct.ok()) << direct.status();
    ASSERT_TRUE((*direct)->Command({"SCRIPT", "FLUSH"}).ok());
    // Only the release script is cached again (another client's EVAL of it
    // would do the same): the clean-up release runs, the acquire does not.
    auto loaded = (*direct)->Command(
        {"SCRIPT", "LOAD", std::string(internal::ReleaseScript().source)});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
  }
  slow.SetLatency(absl::Milliseconds(100), absl::Milliseconds(100));
  AcquireOptions fenced;
  fenced.ttl = absl::Seconds(30);
  fenced.fencing = true;
  absl::StatusOr<Lock> lock = client->Acquire(kJob, fenced);
  ASSERT_EQ(lock.status().code(), absl::StatusCode::kAborted) << lock.status();
  absl::SleepFor(absl::Milliseconds(600));
  EXPECT_EQ(Value(0, key), std::nullopt) << "the lost attempt left its key";
}

// Validity is computed from the TTL the masters were given (whole
// milliseconds), not from the finer TTL asked for.
TEST_F(FailClosedTest, ValidityIsComputedFromTheTtlSentInWholeMilliseconds) {
  START_CLUSTER(3);
  Options options = TestOptions(cluster_->Uris());
  options.drift_factor = 0.01;
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Lock> lock =
      (*client)->TryAcquire(kJob, absl::Seconds(2) + absl::Microseconds(900));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // 2000ms sent: 2000ms - (2000ms * 0.01 + 2ms).
  EXPECT_EQ(absl::FromChrono(lock->valid_until() - lock->acquired_at()),
            absl::Milliseconds(1978));
  auto direct = cluster_->Client(0);
  ASSERT_TRUE(direct.ok());
  auto pttl = (*direct)->Command({"PTTL", lock->key()});
  ASSERT_TRUE(pttl.ok());
  EXPECT_LE(pttl->integer, 2000);
}

// A lock with microseconds of validity left is worse than none; the default
// refuses a TTL that cannot leave min_validity.
TEST_F(FailClosedTest, TheDefaultMinValidityRefusesATtlThatLeavesTooLittle) {
  START_CLUSTER(1);
  Options options = TestOptions(cluster_->Uris());
  options.request_timeout = absl::Milliseconds(5);
  EXPECT_EQ(Options().min_validity, absl::Milliseconds(10));
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  // 12ms - (0.12ms + 2ms) = 9.88ms of validity at best: refused.
  absl::StatusOr<Lock> lock =
      (*client)->TryAcquire(kJob, absl::Milliseconds(12));
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kInvalidArgument)
      << lock.status();
  EXPECT_TRUE(Mentions(lock.status(), "min_validity")) << lock.status();
}

// Options::on_warning's lines (given on the loop thread), for the test
// thread.
class WarningLines {
 public:
  std::function<void(absl::string_view)> Sink() {
    return [this](absl::string_view text) {
      absl::MutexLock lock(&mu_);
      lines_.emplace_back(text);
    };
  }
  std::vector<std::string> Lines() const {
    absl::MutexLock lock(&mu_);
    return lines_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_;
};

// A master that may evict our keys is flagged in Health() and warned about
// once: one line per kind of risk, counting and naming the masters with it.
TEST_F(FailClosedTest, AMasterThatCanEvictLockKeysIsFlaggedAndWarnedOnce) {
  START_CLUSTER(2);
  {
    auto direct = cluster_->Client(1);
    ASSERT_TRUE(direct.ok());
    ASSERT_TRUE(
        (*direct)
            ->Command({"CONFIG", "SET", "maxmemory-policy", "volatile-lru"})
            .ok());
  }
  Options options = TestOptions(cluster_->Uris());
  WarningLines lines;
  options.on_warning = lines.Sink();
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->TryAcquire("a", absl::Seconds(1)).ok());
  ASSERT_TRUE((*client)->TryAcquire("b", absl::Seconds(1)).ok());
  const std::vector<MasterHealth> health = (*client)->Health();
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(health[0].maxmemory_policy, "noeviction");
  EXPECT_TRUE(health[0].eviction.ok()) << health[0].eviction;
  EXPECT_EQ(health[1].maxmemory_policy, "volatile-lru");
  EXPECT_EQ(health[1].eviction.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Mentions(health[1].eviction, "noeviction")) << health[1].eviction;
  std::vector<std::string> warnings = lines.Lines();
  // Both masters also run without AOF: one durability line for both.
  const auto durability = std::find_if(
      warnings.begin(), warnings.end(), [](const std::string& w) {
        return absl::StrContains(w, "appendonly no");
      });
  ASSERT_NE(durability, warnings.end());
  EXPECT_TRUE(absl::StrContains(*durability, "2 of 2 masters")) << *durability;
  EXPECT_TRUE(absl::StrContains(*durability, "--accept-non-durable"))
      << *durability;
  EXPECT_EQ(std::count_if(warnings.begin(), warnings.end(),
                          [](const std::string& w) {
                            return absl::StrContains(w, "appendonly no");
                          }),
            1);
  warnings.erase(std::remove_if(warnings.begin(), warnings.end(),
                                [](const std::string& w) {
                                  return !absl::StrContains(w,
                                                            "maxmemory-policy");
                                }),
                 warnings.end());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(warnings[0], cluster_->server(1).Address()))
      << warnings[0];
  EXPECT_TRUE(absl::StrContains(warnings[0], "1 of 2 masters")) << warnings[0];
  EXPECT_TRUE(absl::StrContains(warnings[0], "volatile-lru")) << warnings[0];
}

// An operator who accepted masters without durable persistence
// (Options::accept_non_durable_masters) is not warned about it; Health()
// still says what it costs.
TEST_F(FailClosedTest, AcceptedNonDurableMastersAreNotWarnedAbout) {
  START_CLUSTER(3);
  Options options = TestOptions(cluster_->Uris());
  options.accept_non_durable_masters = true;
  WarningLines lines;
  options.on_warning = lines.Sink();
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->TryAcquire("a", absl::Seconds(1)).ok());
  const std::vector<MasterHealth> health = (*client)->Health();
  ASSERT_EQ(health.size(), 3u);
  EXPECT_EQ(health[0].durability.code(), absl::StatusCode::kFailedPrecondition)
      << health[0].durability;
  const std::vector<std::string> warnings = lines.Lines();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
}

}  // namespace
}  // namespace redlock
