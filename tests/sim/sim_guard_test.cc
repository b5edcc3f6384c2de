// Copyright 2026 The redlock Authors.
//
// The restart guard and fencing on simulated time: the scenes of
// tests/engine/restart_guard_test.cc and tests/api/fencing_test.cc that test
// the library's logic and had to wait seconds on the real clock (the deployment
// ageing past INFO's one-second uptime resolution, a reborn master being held
// back for max_ttl, a slow link), replayed on the production engine over
// SimCluster masters. SIGSTOP/SIGCONT are Pause()/Resume(), SIGKILL and a
// restart are Crash()/Restart(), the fault proxy's latency is
// SetExtraDelay(), and sleeping is running the loop: each test takes
// milliseconds. The same status codes, message fragments, tokens and keys on
// masters are asserted as on real servers.
//
// Also the lifetime of a lock whose extensions overlap (SimLifetimeTest).
//
// Three of these scenes also stay on real redis-server processes, as proof
// that the simulated masters and network behave like the real ones where it
// matters here (tests/engine/restart_guard_test.cc and
// tests/api/fencing_test.cc):
//   RestartGuardTest.WithTheGuardTheRestartedMastersGrantDoesNotCount
//   RestartGuardTest.WithoutTheGuardARestartWithoutDataAllowsADoubleGrant
//   FencingTest.AnEmptyIntersectionMasterGivesALargerTokenOrARefusal

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/async_redlock.h"
#include "redlock/health.h"
#include "redlock/keys.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/engine/engine.h"
#include "tests/sim/sim_cluster.h"
#include "tests/sim/sim_loop.h"
#include "tests/sim/sim_redis.h"
#include "tests/sim/unsafe_rules.h"
#include "tests/support/guard_expectations.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::internal::Engine;
using ::redlock::internal::RedisReply;
using ::redlock::sim::SimCluster;
using ::redlock::sim::SimLoop;
using ::redlock::sim::SimRedis;
using ::redlock::sim::SimRuntime;
using ::redlock::testing::ExpectTheRebornMastersGrantDidNotCount;
using ::redlock::testing::Fenced;
using ::redlock::testing::MarkerState;
using ::redlock::testing::TestOptions;

constexpr char kJob[] = "job";
constexpr char kResource[] = "ledger";
constexpr char kMarker[] = "redlock:__deployment__";
constexpr uint64_t kSeed = 1;

// How long a killed master stays down before it answers again, about what
// RedisServer::Restart() takes on a real machine.
constexpr absl::Duration kRestartDowntime = absl::Milliseconds(20);
// A bound on simulated time for anything the tests wait for; far beyond any
// timeout the scenes set, so reaching it is a failure, not a slow machine.
constexpr absl::Duration kSimulatedLimit = absl::Minutes(10);

// A reply for a failure message: its type and text.
std::string Describe(const RedisReply& reply) {
  return absl::StrCat("type ", static_cast<int>(reply.type), " \"", reply.str,
                      "\" ", reply.integer);
}

AcquireOptions Plain(absl::Duration ttl) {
  AcquireOptions options;
  options.ttl = ttl;
  return options;
}

// One simulated deployment: a loop, five masters, and clients made on it.
// Everything runs on the test's thread; only the loop advances time.
class SimGuardFixture : public ::testing::Test {
 protected:
  SimGuardFixture() { NewCluster(/*persistence=*/false); }
  ~SimGuardFixture() override { DropCluster(); }

  // Fresh masters (and no clients). With `persistence` a restarted master
  // keeps its keyspace (AOF, appendfsync always); without, it comes back
  // empty.
  // `config`: the masters' settings (count, persistence, ...).
  void NewCluster(bool persistence,
                  SimCluster::Config config = SimCluster::Config{}) {
    DropCluster();
    persistence_ = persistence;
    loop_ = std::make_unique<SimLoop>();
    cluster_ =
        std::make_unique<SimCluster>(loop_.get(), std::move(config), kSeed);
  }

  Options ClientOptions() const { return TestOptions(cluster_->master_uris()); }

  // A client: the production engine on a simulated runtime. Owned by the
  // fixture.
  // `unsafe`: a rule put back to show what it breaks (unsafe_rules.h).
  Engine& MakeClient(
      Options options,
      std::shared_ptr<const redlock::testing::UnsafeRules> unsafe = nullptr) {
    auto engine = Engine::Create(
        std::make_unique<SimRuntime>(loop_.get(), cluster_.get(), kSeed),
        std::move(options), std::move(unsafe));
    if (!engine.ok()) {
      ADD_FAILURE() << engine.status();
      std::abort();  // A harness bug: there is no client to hand out.
    }
    engines_.push_back(*std::move(engine));
    return *engines_.back();
  }

  // Runs the loop until `done` holds or kSimulatedLimit has passed. True if
  // `done` holds.
  bool RunUntil(const std::function<bool()>& done) {
    const absl::Time limit = loop_->now() + kSimulatedLimit;
    while (!done() && loop_->now() < limit && loop_->RunNext()) {
    }
    return done();
  }
  // Lets `d` of simulated time pass.
  void RunFor(absl::Duration d) { loop_->RunUntil(loop_->now() + d); }
  absl::Time Now() const { return loop_->now(); }

  // The engine's Acquire() as a blocking call on simulated time.
  absl::StatusOr<Lock> Acquire(Engine& engine, absl::string_view resource,
                               const AcquireOptions& options) {
    auto result = std::make_shared<std::optional<absl::StatusOr<Lock>>>();
    absl::Status sent = engine.Acquire(
        resource, options,
        [result](absl::StatusOr<Lock> lock) { *result = std::move(lock); });
    if (!sent.ok()) return sent;
    if (!RunUntil([&] { return result->has_value(); })) {
      return absl::InternalError("simulation: the callback never ran");
    }
    return **std::move(result);
  }
  // Redlock::TryAcquire(): one attempt.
  absl::StatusOr<Lock> TryAcquire(Engine& engine, absl::string_view resource,
                                  absl::Duration ttl) {
    return Acquire(engine, resource, Plain(ttl));
  }
  absl::Status Release(Engine& engine, const Lock& lock) {
    auto result = std::make_shared<std::optional<absl::Status>>();
    absl::Status sent = engine.Release(
        lock, ReleaseOptions(), [result](absl::StatusOr<ReleaseReport> report) {
          *result = report.status();
        });
    if (!sent.ok()) return sent;
    if (!RunUntil([&] { return result->has_value(); })) {
      return absl::InternalError("simulation: the callback never ran");
    }
    return **result;
  }

  // SIGKILL, and the server started again once kRestartDowntime has passed:
  // RedisServer::Restart().
  void RestartMaster(int i) {
    cluster_->Crash(i);
    RunFor(kRestartDowntime);
    cluster_->Restart(i, persistence_);
  }

  // A command run on master `i` right now, as redis-cli would.
  RedisReply Command(int i, const std::vector<std::string>& argv) {
    SimRedis::Connection conn;
    return cluster_->redis(i).Execute(Now(), conn, argv);
  }
  std::optional<std::string> Value(int i, const std::string& key) const {
    return cluster_->redis(i).Value(loop_->now(), /*db=*/0, key);
  }
  // The operator's restore after a majority lost its data (what `redlock
  // reconfigure --masters=L --to=L` writes; a member name is the address):
  // the record master `from` carries, over whatever record each master of
  // `to` has, naming its process; an unmarked one is marked reborn.
  void RestoreRecordByHand(int from, std::vector<int> to,
                           absl::Duration max_ttl) {
    const std::optional<std::string> marker = Value(from, kMarker);
    ASSERT_TRUE(marker.has_value());
    auto record_of = [](const std::string& value, internal::Membership* out) {
      std::string state, member;
      int64_t time_us = 0;
      std::optional<std::string> text;
      internal::ParseMarker(value, &state, &time_us, nullptr, nullptr, &text);
      return text.has_value() &&
             internal::ParseMarkerRecord(*text, &member, out).ok();
    };
    internal::Membership record;
    ASSERT_TRUE(record_of(*marker, &record)) << *marker;
    for (int i : to) {
      const std::optional<std::string> now = Value(i, kMarker);
      internal::Membership had;
      const std::string expected = now.has_value() && record_of(*now, &had)
                                       ? internal::RecordText(had)
                                       : "";
      const std::string& run_id = cluster_->redis(i).run_id();
      const RedisReply r = Command(
          i, internal::CommandArgv(
                 internal::ReconfigureCommand(
                     kMarker, expected,
                     internal::MarkerSuffix(
                         absl::StrCat("127.0.0.1:", 7001 + i), record, run_id),
                     internal::kRebornMarker, run_id, max_ttl),
                 /*eval=*/true));
      ASSERT_EQ(r.elements.size(), 2u) << i;
      ASSERT_EQ(r.elements[0].integer, 1) << i << ": " << r.elements[1].str;
    }
  }
  // The deployment marker's state on master i: "trusted", "reborn" or empty.
  std::string Marker(int i) const { return MarkerState(Value(i, kMarker)); }
  // The fencing counter of kResource on master i, or -1 if absent.
  int64_t Counter(int i) const {
    const std::optional<std::string> value =
        Value(i, FenceCounterKey(Options(), kResource));
    int64_t n = -1;
    if (value.has_value()) EXPECT_TRUE(absl::SimpleAtoi(*value, &n)) << *value;
    return n;
  }

  std::unique_ptr<SimLoop> loop_;
  std::unique_ptr<SimCluster> cluster_;

 private:
  // Clients first (what they still owe runs, cancelled), then the masters,
  // then the loop.
  void DropCluster() {
    engines_.clear();
    if (loop_ != nullptr) loop_->RunUntilIdle();
    cluster_.reset();
    loop_.reset();
  }

  bool persistence_ = false;
  std::vector<std::unique_ptr<Engine>> engines_;
};

// tests/engine/restart_guard_test.cc on simulated time.
class SimRestartGuardTest : public SimGuardFixture {
 protected:
  Engine& MakeGuardClient(
      bool guard, absl::Duration max_ttl = absl::Hours(1),
      std::shared_ptr<const redlock::testing::UnsafeRules> unsafe = nullptr) {
    Options options = ClientOptions();
    options.restart_guard = guard;
    options.max_ttl = max_ttl;
    options.default_ttl = std::min(options.default_ttl, max_ttl);
    return MakeClient(std::move(options), std::move(unsafe));
  }

  // A master restarted less than about 2s after the deployment was first
  // marked cannot be told from one that was only marked late (Redis reports
  // uptime in whole seconds): let the deployment age past that.
  void AgePastUptimeResolution() { RunFor(absl::Milliseconds(2200)); }

  // A holds `kJob` on exactly masters 0, 1 and 2 (3 and 4 were paused while
  // it acquired), then master 2 restarts without its data. Returns A's lock.
  absl::StatusOr<Lock> HoldOnThreeThenRestartOneEmpty(Engine& a) {
    // Every master has been seen and marked before the scene starts.
    absl::StatusOr<Lock> warmup = TryAcquire(a, "warmup", absl::Seconds(1));
    if (!warmup.ok()) return warmup.status();
    AgePastUptimeResolution();
    for (int i : {3, 4}) cluster_->Pause(i);
    absl::StatusOr<Lock> lock = TryAcquire(a, kJob, absl::Seconds(30));
    for (int i : {3, 4}) cluster_->Resume(i);
    if (!lock.ok()) return lock.status();
    // The SETs queued on 3 and 4 ran once they woke: drop them, as if they
    // had been lost on the way, so that A holds exactly a quorum.
    RunFor(absl::Milliseconds(50));
    for (int i : {3, 4}) {
      const RedisReply del = Command(i, {"DEL", LockKey(Options(), kJob)});
      if (del.type != RedisReply::Type::kInteger) {
        return absl::InternalError(Describe(del));
      }
    }
    RestartMaster(2);
    return lock;
  }
};

TEST_F(SimRestartGuardTest, AFreshDeploymentIsMarkedTrustedAndNotHeldBack) {
  Engine& client = MakeGuardClient(/*guard=*/true);
  absl::StatusOr<Lock> lock = TryAcquire(client, kJob, absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  RunFor(absl::Milliseconds(50));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Marker(i), "trusted") << i;
}

TEST_F(SimRestartGuardTest,
       WithoutTheGuardARestartWithoutDataAllowsADoubleGrant) {
  // The known unsafe case the Redlock paper describes, reproduced.
  Engine& a = MakeGuardClient(/*guard=*/false);
  absl::StatusOr<Lock> held = HoldOnThreeThenRestartOneEmpty(a);
  ASSERT_TRUE(held.ok()) << held.status();
  Engine& b = MakeGuardClient(/*guard=*/false);
  // The restarted master's membership record written back (it went with
  // its data) before B asks: until then its vote is not yet judged, with
  // or without the guard.
  RunFor(absl::Milliseconds(200));
  absl::StatusOr<Lock> second = TryAcquire(b, kJob, absl::Seconds(30));
  ASSERT_TRUE(second.ok()) << "expected the double grant: " << second.status();
  EXPECT_TRUE(held->valid());
  EXPECT_TRUE(second->valid());  // Two holders at once.
}

TEST_F(SimRestartGuardTest, WithTheGuardTheRestartedMastersGrantDoesNotCount) {
  Engine& a = MakeGuardClient(/*guard=*/true);
  absl::StatusOr<Lock> held = HoldOnThreeThenRestartOneEmpty(a);
  ASSERT_TRUE(held.ok()) << held.status();
  Engine& b = MakeGuardClient(/*guard=*/true);
  absl::StatusOr<Lock> second = TryAcquire(b, kJob, absl::Seconds(30));
  // Two masters hold A's lock (denied), the reborn one's grant is a failed
  // vote: held elsewhere, not an outage.
  ExpectTheRebornMastersGrantDidNotCount(
      second,
      testing::HealthOnceMarked([&] { return b.Health(); },
                                [&] { RunFor(absl::Milliseconds(10)); },
                                /*i=*/2),
      /*reborn=*/2);
  // The restarted master was recognised as having lost its data.
  EXPECT_EQ(Marker(2), "reborn");
  // And the first holder still holds a quorum.
  EXPECT_TRUE(held->valid());
}

TEST_F(SimRestartGuardTest, TheGuardLiftsOnceTheMasterHasBeenUpForMaxTtl) {
  constexpr absl::Duration kMaxTtl = absl::Seconds(6);
  Engine& a = MakeGuardClient(/*guard=*/true, kMaxTtl);
  ASSERT_TRUE(TryAcquire(a, "warmup", absl::Seconds(1)).ok());
  AgePastUptimeResolution();
  const absl::Time first_restart = Now();
  for (int i : {0, 1, 2}) RestartMaster(i);
  // A is back on all three and has judged them: the refusal below is the
  // guard's, not a connection still coming back.
  ASSERT_TRUE(RunUntil([&] {
    const std::vector<MasterHealth> health = a.Health();
    for (int i : {0, 1, 2}) {
      if (!health[i].connected || health[i].marker != "reborn") return false;
    }
    return true;
  }));
  // A majority lost its data: no lock is granted while the guard holds...
  absl::StatusOr<Lock> early = TryAcquire(a, kJob, absl::Seconds(1));
  ASSERT_LT(Now() - first_restart, kMaxTtl - absl::Seconds(1));
  // Three reborn masters' grants are failed votes.
  EXPECT_EQ(early.status().code(), absl::StatusCode::kUnavailable)
      << early.status();
  EXPECT_NE(early.status().message().find("restart guard: this master lost "
                                          "its data"),
            std::string::npos)
      << early.status();
  // ...and once they have been up for max_ttl (every lock they forgot has
  // expired by then), their grants count again. Uptime comes in whole
  // seconds: allow one more.
  loop_->RunUntil(first_restart + kMaxTtl + absl::Milliseconds(1500));
  absl::StatusOr<Lock> later = TryAcquire(a, kJob, absl::Seconds(1));
  EXPECT_TRUE(later.ok()) << later.status();
  // Still reborn, but counting again.
  for (const MasterHealth& h : a.Health()) {
    EXPECT_TRUE(h.grants_count.ok()) << h.master << ": " << h.grants_count;
  }
}

// Partial data loss: three masters persisting by RDB snapshots. The
// deployment is marked and snapshotted; then X takes R, and two of the three
// masters crash and come back from the snapshot: with the marker (still
// "trusted", from before their restart), without X's key. A fresh client
// must not count their grants while X holds R; it may once they have been
// up for max_ttl, by when every lock they forgot has expired.
class SimPartialLossTest : public SimRestartGuardTest {
 protected:
  static constexpr absl::Duration kMaxTtl = absl::Seconds(6);
  static constexpr absl::Duration kTtl = absl::Seconds(5);

  SimPartialLossTest() {
    SimCluster::Config config;
    config.masters = 3;
    config.redis.persistence = SimRedis::Persistence::kRdb;  // Save() only.
    NewCluster(/*persistence=*/false, std::move(config));
  }

  // X holds R on all three masters; masters 0 and 1 then crash and restart
  // from the snapshot taken before X's grant. Returns X's lock.
  absl::StatusOr<Lock> HoldThenLoseItOnTwo(Engine& x) {
    absl::StatusOr<Lock> warmup = TryAcquire(x, "warmup", absl::Seconds(1));
    if (!warmup.ok()) return warmup.status();
    RunFor(absl::Milliseconds(50));  // The markers' writes have landed.
    for (int i = 0; i < 3; ++i) cluster_->redis(i).Save(Now());
    absl::StatusOr<Lock> lock = TryAcquire(x, kJob, kTtl);
    if (!lock.ok()) return lock.status();
    RunFor(absl::Milliseconds(50));
    restarted_at_ = Now();
    for (int i : {0, 1}) cluster_->Crash(i);
    RunFor(kRestartDowntime);
    for (int i : {0, 1}) cluster_->Restart(i);  // From the snapshot.
    return lock;
  }

  absl::Time restarted_at_;
};

TEST_F(SimPartialLossTest, AFreshClientIsRefusedWhileTheHolderHoldsThenCounts) {
  Engine& x = MakeGuardClient(/*guard=*/true, kMaxTtl);
  absl::StatusOr<Lock> held = HoldThenLoseItOnTwo(x);
  ASSERT_TRUE(held.ok()) << held.status();
  // Two of three back from a snapshot: their records may be older than they
  // were given, so no client counts them until the operator restores the
  // record (the restart guard then holds them back as before).
  RestoreRecordByHand(2, {0, 1}, kMaxTtl);
  const std::string key = LockKey(Options(), kJob);
  // The snapshot kept the marker and not X's key.
  for (int i : {0, 1}) {
    EXPECT_EQ(Marker(i), "trusted") << i;
    EXPECT_FALSE(Value(i, key).has_value()) << i;
  }
  EXPECT_EQ(Value(2, key), held->token());

  Engine& y = MakeGuardClient(/*guard=*/true, kMaxTtl);
  absl::StatusOr<Lock> early = TryAcquire(y, kJob, kTtl);
  ASSERT_LT(Now() - restarted_at_, absl::Seconds(1));
  ASSERT_FALSE(early.ok()) << "a second holder while X holds";
  // Decided as soon as a quorum is out of reach: by X's denial and a
  // restarted master's failed vote (held elsewhere), or by both restarted
  // masters' (too few answered). Either way the guard's reason is given.
  EXPECT_TRUE(early.status().code() == absl::StatusCode::kAborted ||
              early.status().code() == absl::StatusCode::kUnavailable)
      << early.status();
  EXPECT_NE(
      early.status().message().find("restart guard: this master restarted"),
      std::string::npos)
      << early.status();
  EXPECT_TRUE(held->valid());
  // Y's attempt left nothing behind on the masters that forgot X.
  RunFor(absl::Milliseconds(50));
  for (int i : {0, 1}) EXPECT_FALSE(Value(i, key).has_value()) << i;

  // Up for max_ttl (and a second more: uptime comes in whole seconds):
  // their grants count again, and X's lock has long expired.
  loop_->RunUntil(restarted_at_ + kMaxTtl + absl::Milliseconds(1500));
  EXPECT_FALSE(held->valid());
  absl::StatusOr<Lock> later = TryAcquire(y, kJob, kTtl);
  EXPECT_TRUE(later.ok()) << later.status();
}

TEST_F(SimPartialLossTest, TrustingTheMarkedRestartedMastersGivesADoubleGrant) {
  // The same scene with the rule from before: the hole, reproduced.
  Engine& x = MakeGuardClient(/*guard=*/true, kMaxTtl);
  absl::StatusOr<Lock> held = HoldThenLoseItOnTwo(x);
  ASSERT_TRUE(held.ok()) << held.status();
  RestoreRecordByHand(2, {0, 1}, kMaxTtl);
  auto unsafe = std::make_shared<redlock::testing::UnsafeRules>();
  unsafe->trust_marked_restarts = true;
  Engine& y = MakeGuardClient(/*guard=*/true, kMaxTtl, unsafe);
  absl::StatusOr<Lock> second = TryAcquire(y, kJob, kTtl);
  ASSERT_TRUE(second.ok()) << "expected the double grant: " << second.status();
  EXPECT_TRUE(held->valid());
  EXPECT_TRUE(second->valid());  // Two holders at once.
}

TEST_F(SimRestartGuardTest, ARestartWithAofKeepsTheMarkerAndIsNotHeldBack) {
  NewCluster(/*persistence=*/true);
  Engine& a = MakeGuardClient(/*guard=*/true);
  absl::StatusOr<Lock> held = TryAcquire(a, kJob, absl::Seconds(30));
  ASSERT_TRUE(held.ok()) << held.status();
  RunFor(absl::Milliseconds(50));
  for (int i : {0, 1, 2}) RestartMaster(i);
  for (int i : {0, 1, 2}) EXPECT_EQ(Marker(i), "trusted") << i;
  // The lock survived on disk: a second owner is refused by the restarted
  // masters themselves.
  Engine& b = MakeGuardClient(/*guard=*/true);
  EXPECT_EQ(TryAcquire(b, kJob, absl::Seconds(30)).status().code(),
            absl::StatusCode::kAborted);
  // And their grants count at once: a new resource is granted by all five.
  absl::StatusOr<Lock> other = TryAcquire(b, "other", absl::Seconds(5));
  ASSERT_TRUE(other.ok()) << other.status();
  RunFor(absl::Milliseconds(50));
  int granted = 0;
  for (const MasterVote& v : other->votes()) {
    granted += v.kind == MasterVote::Kind::kGranted;
  }
  EXPECT_GE(granted, 3);
}

// tests/api/fencing_test.cc on simulated time.
class SimFencingTest : public SimGuardFixture {
 protected:
  Engine& MakeFencingClient(bool guard = true) {
    Options options = ClientOptions();
    options.restart_guard = guard;
    options.max_ttl = absl::Seconds(10);
    options.default_ttl = absl::Seconds(5);
    return MakeClient(std::move(options));
  }

  // The recovery in docs/lifetime-and-fencing.md, as an operator would run
  // it: raise the counter on master `i` to `floor` unless it is already
  // higher, and return what it holds then. The real-server test runs the
  // documented EVAL; SimRedis runs only the library's own scripts, so this
  // is the same raise-only step done at one instant of simulated time, when
  // nothing else runs.
  std::string RaiseCounter(int i, const std::string& key, int64_t floor) {
    const RedisReply current = Command(i, {"GET", key});
    int64_t c = 0;
    if (current.type == RedisReply::Type::kString) {
      EXPECT_TRUE(absl::SimpleAtoi(current.str, &c)) << current.str;
    }
    if (c < floor) Command(i, {"SET", key, absl::StrCat(floor)});
    return Value(i, key).value_or("<none>");
  }
};

// The adversarial case: A's token was written to {0,1,2}; master 2
// comes back empty; 0 and 1 are paused, so B reaches only {2,3,4}. A naive
// "max over the granting quorum" would hand B a token no larger than A's.
TEST_F(SimFencingTest, AnEmptyIntersectionMasterGivesALargerTokenOrARefusal) {
  for (bool guard : {true, false}) {
    SCOPED_TRACE(guard ? "restart guard on" : "restart guard off");
    NewCluster(/*persistence=*/false);  // Fresh masters for each variant.
    Engine& a = MakeFencingClient(guard);
    ASSERT_TRUE(Acquire(a, "warmup", Fenced()).ok());  // Marks every master.
    // Let the deployment age past the resolution of Redis's uptime, so that
    // the restarts below are told from a late first marking.
    RunFor(absl::Milliseconds(2200));
    for (int i : {3, 4}) cluster_->Pause(i);
    absl::StatusOr<Lock> first = Acquire(a, kResource, Fenced());
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(Release(a, *first).ok());
    // The write-back queued on 3 and 4 must not reach them: they restart
    // empty-handed for the counter (a kill loses what they had buffered).
    for (int i : {3, 4}) {
      cluster_->Crash(i);
      RestartMaster(i);
    }
    for (int i : {3, 4}) {
      // Restarted empty, but before any client decides they are reborn the
      // test puts the marker back as if they had never lost anything: the
      // worst case for the intersection argument is that 3 and 4 are trusted
      // and simply never saw A's token.
      const RedisReply set =
          Command(i, {"SET", DeploymentMarkerKey(Options()), "trusted"});
      ASSERT_EQ(set.type, RedisReply::Type::kStatus) << Describe(set);
    }
    ASSERT_EQ(Counter(3), -1);
    ASSERT_EQ(Counter(4), -1);
    // Master 2, in A's write quorum, comes back empty.
    RestartMaster(2);
    ASSERT_EQ(Counter(2), -1);
    for (int i : {0, 1}) cluster_->Pause(i);
    Engine& b = MakeFencingClient(guard);
    absl::StatusOr<Lock> second = Acquire(b, kResource, Fenced());
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
    for (int i : {0, 1}) cluster_->Resume(i);
    // With 0 and 1 back, B reads A's token from them and goes past it.
    absl::StatusOr<Lock> third = Acquire(b, kResource, Fenced());
    ASSERT_TRUE(third.ok()) << third.status();
    EXPECT_GT(third->fence(), first->fence());
  }
}

TEST_F(SimFencingTest,
       AfterAMajorityRestartedEmptyOnlyAnOperatorRaiseRestoresFencing) {
  Options options = ClientOptions();
  options.max_ttl = absl::Seconds(2);
  options.default_ttl = absl::Seconds(1);
  Engine& a = MakeClient(options);
  ASSERT_TRUE(Acquire(a, "warmup", Fenced(absl::Seconds(1))).ok());
  RunFor(absl::Milliseconds(2200));  // Past uptime's resolution.
  absl::StatusOr<Lock> first = Acquire(a, kResource, Fenced(absl::Seconds(1)));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(Release(a, *first).ok());

  // A majority loses everything, counters included.
  for (int i : {0, 1, 2}) RestartMaster(i);
  // Past max_ttl, the reborn masters' grants count again; their counters do
  // not come back by themselves.
  RunFor(absl::Milliseconds(2500));
  AcquireOptions no_wait = Fenced(absl::Seconds(1));
  no_wait.wait = absl::ZeroDuration();
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<Lock> refused = Acquire(a, kResource, no_wait);
    ASSERT_FALSE(refused.ok()) << "fence " << refused->fence();
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_NE(refused.status().message().find("fencing unavailable"),
              std::string::npos)
        << refused.status();
  }
  // A plain acquisition still works: only fencing is refused.
  absl::StatusOr<Lock> plain = TryAcquire(a, kResource, absl::Seconds(1));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(Release(a, *plain).ok());

  // The operator raises every counter to 1000, e.g. the highest token the
  // resource accepted rounded up.
  const std::string key = FenceCounterKey(Options(), kResource);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(RaiseCounter(i, key, 1000), "1000");
  absl::StatusOr<Lock> after = Acquire(a, kResource, no_wait);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->fence(), 1001u);
  // Raise-only: a floor below the counter changes nothing.
  int64_t now = 0;
  const std::string lower = RaiseCounter(0, key, 5);
  ASSERT_TRUE(absl::SimpleAtoi(lower, &now)) << lower;
  EXPECT_GE(now, 1000);  // 1001 once the write-back reached master 0.
}

// A reborn master's counter counts only under the grant rule: one that has
// been up for less than max_ttl is not judged, whatever counter it holds (a
// write-back that reached it after its restart can be older than tokens it
// forgot). Here the highest token, 10, lives only on master 2, which is
// paused; master 4 came back empty moments ago and was handed a stale 3.
// Counting master 4's read would complete a quorum of reads that misses 10
// and issue 4.
TEST_F(SimFencingTest, AYoungRebornMastersCounterDoesNotCompleteTheReadQuorum) {
  Options options = ClientOptions();
  options.max_ttl = absl::Seconds(4);
  options.default_ttl = absl::Seconds(2);
  Engine& a = MakeClient(options);
  ASSERT_TRUE(Acquire(a, "warmup", Fenced(absl::Seconds(1))).ok());
  RunFor(absl::Milliseconds(2200));  // Past uptime's resolution.
  // Master 3 lost its data long enough ago that its grants count again.
  RestartMaster(3);
  RunFor(absl::Milliseconds(4500));
  // Master 4 lost its data just now.
  RestartMaster(4);
  // A reconnects to it and marks it reborn.
  ASSERT_TRUE(RunUntil([&] {
    return a.Health()[4].connected && a.Health()[4].marker == "reborn";
  }));
  const std::vector<MasterHealth> health = a.Health();
  ASSERT_EQ(health[3].marker, "reborn");
  ASSERT_TRUE(health[3].grants_count.ok()) << health[3].grants_count;
  ASSERT_EQ(health[4].marker, "reborn");
  ASSERT_FALSE(health[4].grants_count.ok());

  const std::string counter = FenceCounterKey(Options(), kResource);
  const std::string lock = LockKey(Options(), kResource);
  auto set = [&](int i, std::vector<std::string> argv) {
    const RedisReply reply = Command(i, argv);
    ASSERT_EQ(reply.type, RedisReply::Type::kStatus) << Describe(reply);
  };
  set(0, {"SET", counter, "3"});
  set(1, {"SET", counter, "3"});
  set(2, {"SET", counter, "10"});
  set(4, {"SET", counter, "3"});
  set(4, {"SET", lock, "someone-else", "PX", "30000"});  // 4 denies.
  cluster_->Pause(2);

  AcquireOptions once = Fenced(absl::Seconds(2));
  once.wait = absl::ZeroDuration();
  absl::StatusOr<Lock> b = Acquire(a, kResource, once);
  cluster_->Resume(2);
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
TEST_F(SimFencingTest, AWriteBackThatFindsItsTokenAlreadyWrittenIsRefused) {
  // The real-server test reaches every master through a fault proxy; here
  // the links themselves are slowed down.
  Options options = ClientOptions();
  options.request_timeout = absl::Seconds(2);
  options.connect_timeout = absl::Seconds(2);
  options.stalled_connection_timeout = absl::Seconds(5);
  Engine& x = MakeClient(options);
  ASSERT_TRUE(Acquire(x, "warmup", Fenced()).ok());
  const std::string counter = FenceCounterKey(Options(), kResource);
  for (int i = 0; i < 5; ++i) Command(i, {"SET", counter, "5"});
  // Every request takes 300ms to reach a master and 300ms to come back: X's
  // reads run at about 300ms, its write-back of 6 arrives at about 900ms.
  for (int i = 0; i < 5; ++i) {
    cluster_->SetExtraDelay(i, absl::Milliseconds(300));
  }
  AcquireOptions once = Fenced(absl::Seconds(30));
  once.wait = absl::ZeroDuration();
  auto got = std::make_shared<std::optional<absl::StatusOr<Lock>>>();
  ASSERT_TRUE(x.Acquire(kResource, once, [got](absl::StatusOr<Lock> lock) {
                 *got = std::move(lock);
               }).ok());
  // In between, another acquisition's write-back of 6 lands everywhere.
  RunFor(absl::Milliseconds(600));
  ASSERT_FALSE(got->has_value()) << "finished before the scene was set";
  for (int i = 0; i < 5; ++i) Command(i, {"SET", counter, "6"});
  ASSERT_TRUE(RunUntil([&] { return got->has_value(); }));
  const absl::StatusOr<Lock>& result = **got;
  if (result.ok()) {
    EXPECT_GT(result->fence(), 6u) << "token 6 issued twice";
  } else {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted)
        << result.status();
    EXPECT_NE(result.status().message().find("already at or above"),
              std::string::npos)
        << result.status();
  }
}

// What the simulator found (tests/sim/sim_world.h; docs/safety-under-faults.md
// "Simulation"), pinned as directed scenes.
// INFO reports uptime in whole seconds: a master that restarted empty within
// a second of the deployment's marking reads as "up since before". It used
// to be judged trusted then, and its empty keyspace granted a lock another
// client held (its missing counter read as 0, too). Now it is left unjudged
// while the deployment is young, and judged reborn after that.
TEST_F(SimRestartGuardTest,
       AMasterRestartedEmptyWithinASecondOfTheMarkingCastsNoGrant) {
  Engine& a = MakeGuardClient(/*guard=*/true);
  ASSERT_TRUE(TryAcquire(a, "warmup", absl::Seconds(1)).ok());  // Marks.
  // A holds kJob on exactly 0, 1 and 2, and 2 restarts empty, all within
  // about 100ms of the marking.
  for (int i : {3, 4}) cluster_->Pause(i);
  absl::StatusOr<Lock> held = TryAcquire(a, kJob, absl::Seconds(30));
  for (int i : {3, 4}) cluster_->Resume(i);
  ASSERT_TRUE(held.ok()) << held.status();
  RunFor(absl::Milliseconds(50));
  for (int i : {3, 4}) Command(i, {"DEL", LockKey(Options(), kJob)});
  RestartMaster(2);
  Engine& b = MakeGuardClient(/*guard=*/true);
  absl::StatusOr<Lock> second = TryAcquire(b, kJob, absl::Seconds(30));
  ASSERT_FALSE(second.ok()) << "double grant";
  EXPECT_TRUE(held->valid());
  EXPECT_FALSE(b.Health()[2].grants_count.ok());
  // Past the judgement horizon, the next attempt judges it reborn.
  RunFor(absl::Seconds(3));
  (void)TryAcquire(b, "other", absl::Seconds(1));
  RunFor(absl::Milliseconds(50));
  EXPECT_EQ(Marker(2), "reborn");
}

// The same, with no later attempt to ask: the client judges the master
// reborn by itself once the deployment is past the judgement horizon (it
// stayed unjudged before, which failed FailClosedTest's slow-master scene on
// a loaded machine: markers "" and "" after 5 s).
TEST_F(
    SimRestartGuardTest,
    AMasterLeftUnjudgedIsJudgedOnceTheDeploymentIsOldEnoughWithoutAnAttempt) {
  Engine& a = MakeGuardClient(/*guard=*/true);
  ASSERT_TRUE(TryAcquire(a, "warmup", absl::Seconds(1)).ok());  // Marks.
  RestartMaster(2);
  Engine& b = MakeGuardClient(/*guard=*/true);
  ASSERT_TRUE(RunUntil([&] { return b.masters()[2]->ready(); }));
  RunFor(absl::Milliseconds(50));
  ASSERT_EQ(b.Health()[2].marker, "") << "the scene needs it left unjudged";
  ASSERT_EQ(Marker(2), "");
  RunFor(absl::Seconds(3));
  EXPECT_EQ(Marker(2), "reborn");
  EXPECT_EQ(b.Health()[2].marker, "reborn");
}

// A marker write that timed out on a slow link left the master unjudged in
// that client's view until its next reconnect, which a merely slow link never
// brings: the client refused the master's grants for good. The next
// acquisition attempt now judges it again.
TEST_F(SimRestartGuardTest,
       AMarkerWriteThatTimedOutIsRetriedWithoutAReconnect) {
  Engine& a = MakeGuardClient(/*guard=*/true);
  ASSERT_TRUE(TryAcquire(a, "warmup", absl::Seconds(1)).ok());
  AgePastUptimeResolution();
  // 200ms each way: the handshake (no deadline) completes, the marker
  // write's reply misses request_timeout (300ms here).
  cluster_->Crash(2);
  RunFor(kRestartDowntime);
  cluster_->Restart(2, /*keep_data=*/false);
  cluster_->SetExtraDelay(2, absl::Milliseconds(200));
  ASSERT_TRUE(RunUntil([&] { return !Marker(2).empty(); }));
  RunFor(absl::Milliseconds(800));
  ASSERT_TRUE(a.masters()[2]->ready());
  ASSERT_EQ(a.Health()[2].marker, "")
      << "the scene needs the write timed out; timeouts "
      << a.masters()[2]->counters().timeouts << " connects "
      << a.masters()[2]->counters().connects;
  const int64_t connects = a.masters()[2]->counters().connects;
  cluster_->SetExtraDelay(2, absl::ZeroDuration());
  ASSERT_TRUE(TryAcquire(a, "other", absl::Seconds(1)).ok());
  RunFor(absl::Milliseconds(50));
  EXPECT_EQ(a.Health()[2].marker, "reborn");
  EXPECT_EQ(a.masters()[2]->counters().connects, connects) << "reconnected";
}

// Every master came back empty while their links were slow: this client's
// reborn-marker writes all timed out (they landed, the replies came late), so
// in its view no master carried a marker any more, none could be compared
// with, and it would neither write nor read one again before a reconnect:
// every grant refused for good. It now reads the markers again at its next
// acquisition attempt (as it would an operator's marking by hand), and the
// masters count again once up for max_ttl.
TEST_F(SimRestartGuardTest,
       AfterEveryMarkerWriteTimedOutTheMarkersAreReadAgain) {
  Engine& a = MakeGuardClient(/*guard=*/true, /*max_ttl=*/absl::Seconds(10));
  ASSERT_TRUE(TryAcquire(a, kJob, absl::Seconds(1)).ok());
  AgePastUptimeResolution();
  for (int i = 0; i < 5; ++i) cluster_->Crash(i);
  RunFor(kRestartDowntime);
  for (int i = 0; i < 5; ++i) {
    cluster_->Restart(i, /*keep_data=*/false);
    cluster_->SetExtraDelay(i, absl::Milliseconds(200));
  }
  RunFor(absl::Seconds(3));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(a.masters()[i]->ready()) << i;
    ASSERT_EQ(a.Health()[i].marker, "") << i << ": the scene needs it unmarked";
  }
  for (int i = 0; i < 5; ++i) cluster_->SetExtraDelay(i, absl::ZeroDuration());
  absl::StatusOr<Lock> refused = TryAcquire(a, "x", absl::Seconds(1));
  ASSERT_FALSE(refused.ok());  // Young reborn masters, or not yet judged.
  // Every master lost its data: whatever record a late write left on some,
  // fewer than a quorum carry it, and nothing counts until the operator
  // restores it on every master.
  RunFor(absl::Seconds(10));  // Up for max_ttl.
  absl::StatusOr<Lock> still = TryAcquire(a, "x", absl::Seconds(1));
  ASSERT_FALSE(still.ok()) << "a record no quorum carries was acted on";
  int from = -1;
  for (int i = 0; i < 5 && from < 0; ++i) {
    if (Value(i, kMarker).has_value()) from = i;
  }
  ASSERT_GE(from, 0) << "the scene needs a late write to have landed";
  std::vector<int> others;
  for (int i = 0; i < 5; ++i) {
    if (i != from) others.push_back(i);
  }
  RestoreRecordByHand(from, others, absl::Seconds(10));
  AcquireOptions wait = Plain(absl::Seconds(1));
  wait.wait = absl::Seconds(1);
  absl::StatusOr<Lock> lock = Acquire(a, "x", wait);
  EXPECT_TRUE(lock.ok()) << lock.status();
  RunFor(absl::Milliseconds(100));  // Reads the lock did not wait for.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.Health()[i].marker, "reborn") << i;
}

// tests/engine/lifetime_test.cc's overlapping extensions on simulated time,
// carried to the second owner they would let in. A KeepAlive-like 30 s
// extension and a 2 s one of the same lock are in flight together; every
// master applies 30 s then 2 s, and the 30 s round is decided last (masters
// 0 and 1 deny it while another token stands there, so it needs master 4,
// 150 ms away). Once a quorum's keys are gone after 2 s another client wins
// the lock: the first must no longer call it valid by its own clock.
class SimLifetimeTest : public SimGuardFixture {};

TEST_F(SimLifetimeTest,
       OverlappingExtensionsNeverOutliveTheKeysSoNoSecondOwnerOverlaps) {
  Options options = ClientOptions();
  options.request_timeout = absl::Milliseconds(600);
  Engine& a = MakeClient(options);
  const std::string key = LockKey(Options(), kJob);
  absl::StatusOr<Lock> held = TryAcquire(a, kJob, absl::Seconds(5));
  ASSERT_TRUE(held.ok()) << held.status();
  const Lock lock = *held;
  const std::string token(lock.token());
  ASSERT_TRUE(RunUntil([&] {
    for (int i = 0; i < 5; ++i) {
      if (Value(i, key) != token) return false;
    }
    return true;
  }));
  cluster_->SetExtraDelay(4, absl::Milliseconds(150));
  auto set_key = [&](int i, const std::string& value) {
    const RedisReply r = Command(i, {"SET", key, value, "PX", "5000"});
    ASSERT_EQ(r.str, "OK") << Describe(r);
  };
  set_key(0, "someone-else");
  set_key(1, "someone-else");
  std::vector<int> decided;  // Seconds of each extension, as decided.
  absl::Status long_status, short_status;
  ASSERT_TRUE(a.Extend(lock, absl::Seconds(30), [&](absl::Status s) {
                 long_status = s;
                 decided.push_back(30);
               }).ok());
  // The 30 s extension has run on the fast masters once master 2 keeps the
  // key that long.
  ASSERT_TRUE(RunUntil([&] {
    const RedisReply pttl = Command(2, {"PTTL", key});
    return pttl.integer > 20000;
  }));
  set_key(0, token);
  set_key(1, token);
  ASSERT_TRUE(a.Extend(lock, absl::Seconds(2), [&](absl::Status s) {
                 short_status = s;
                 decided.push_back(2);
               }).ok());
  ASSERT_TRUE(RunUntil([&] { return decided.size() == 2; }));
  ASSERT_TRUE(long_status.ok()) << long_status;
  ASSERT_TRUE(short_status.ok()) << short_status;
  ASSERT_EQ(decided, (std::vector<int>{2, 30}))
      << "the scene needs the 30 s extension decided last";
  int short_ttl = 0;
  for (int i = 0; i < 5; ++i) {
    const RedisReply pttl = Command(i, {"PTTL", key});
    short_ttl += pttl.integer <= 2000 ? 1 : 0;
  }
  ASSERT_GE(short_ttl, 3) << "every master applied 2 s last";
  cluster_->SetExtraDelay(4, absl::ZeroDuration());
  Engine& b = MakeClient(ClientOptions());
  AcquireOptions wait = Plain(absl::Seconds(10));
  wait.wait = absl::Seconds(5);
  absl::StatusOr<Lock> second = Acquire(b, kJob, wait);
  ASSERT_TRUE(second.ok()) << "the keys expired, yet " << second.status();
  EXPECT_FALSE(lock.valid())
      << "two owners: the first still calls its lock valid for "
      << lock.remaining() << " while another client holds it";
}

// A hand-off waiter's first attempt is an ordinary one: lost, its undo goes
// to the master still to answer, and a master keeps a clean-up whose reply
// came too late for the next connection (Master::SendCleanup). The waiter
// once kept that attempt's token for its hand-off attempts, so the undo,
// written again after a reconnect, deleted the key the waiter had since been
// handed there: its grant still counted, and another client won the lock
// (found by the simulation: handoff-reconfigure, seed 7000816, which also
// needed a change of masters). Here on three masters: H holds the lock on 0
// and 1, someone else briefly on 2; W's first attempt is denied by 1 and 2
// while master 0 is slow, so its undo to 0 times out and is kept; H's
// release hands the lock to W on 0 and 1; W's connection to master 0 is
// reset; once 2's key expired, a third client must still be refused.
TEST_F(SimLifetimeTest,
       AKeptUndoOfAnEarlierAttemptNeverDeletesAHandOffWaitersKey) {
  SimCluster::Config three;
  three.masters = 3;
  NewCluster(/*persistence=*/true, three);
  const std::string key = LockKey(Options(), kJob);
  Engine& h = MakeClient(ClientOptions());
  absl::StatusOr<Lock> held = TryAcquire(h, kJob, absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  RunFor(absl::Milliseconds(20));
  ASSERT_EQ(Command(2, {"SET", key, "someone-else", "PX", "1500"}).str, "OK");

  Options waiter = ClientOptions();
  waiter.request_timeout = absl::Milliseconds(300);
  waiter.retry.hand_off = true;
  Engine& w = MakeClient(waiter);
  ASSERT_TRUE(TryAcquire(w, "warmup", absl::Seconds(1)).ok());  // Connected.
  cluster_->SetExtraDelay(0, absl::Milliseconds(400));
  std::optional<absl::StatusOr<Lock>> won;
  AcquireOptions wait = Plain(absl::Seconds(10));
  wait.wait = absl::Seconds(8);
  ASSERT_TRUE(w.Acquire(kJob, wait, [&](absl::StatusOr<Lock> lock) {
                 won = std::move(lock);
               }).ok());
  RunFor(absl::Milliseconds(10));  // Denied by 1 and 2: the undo is sent.
  cluster_->SetExtraDelay(0, absl::ZeroDuration());
  RunFor(absl::Milliseconds(700));  // W waits, its entries on every master.
  ASSERT_FALSE(won.has_value());
  ASSERT_TRUE(Release(h, *held).ok());
  ASSERT_TRUE(RunUntil([&] { return won.has_value(); }));
  ASSERT_TRUE(won->ok()) << won->status();
  const Lock lock = **won;
  const std::string token(lock.token());
  ASSERT_EQ(Value(0, key), token) << "the scene needs W handed master 0";
  ASSERT_EQ(Value(1, key), token) << "the scene needs W handed master 1";

  cluster_->ResetConnections(0);
  RunFor(absl::Milliseconds(1500));  // Reconnected; 2's key expired.
  EXPECT_EQ(Value(0, key), token) << "an earlier attempt's undo deleted it";
  ASSERT_TRUE(lock.valid());
  Engine& b = MakeClient(ClientOptions());
  absl::StatusOr<Lock> second = TryAcquire(b, kJob, absl::Seconds(10));
  EXPECT_FALSE(second.ok())
      << "two owners: W holds it for " << lock.remaining();
}

}  // namespace
}  // namespace redlock
