// Copyright 2026 The redlock Authors.
//
// SimRedis alone: the faults a real server cannot be asked for so cheaply
// (run ids, restarts, disconnects) and what Crash() and Restart() keep
// under each persistence.

#include "tests/sim/sim_redis_fixture.h"

namespace redlock::sim {
namespace {

class SimRedisFaultTest : public ::testing::Test {
 protected:
  RedisReply Run(const Argv& argv) { return sim_.Execute(now_, conn_, argv); }

  absl::Time now_ = absl::FromUnixSeconds(1790000000);
  SimRedis sim_{SimRedis::Config{}, 42, now_};
  SimRedis::Connection conn_;
};

int64_t UptimeOf(const RedisReply& info) {
  const auto fields = InfoFields(info.str);
  return fields.count("uptime_in_seconds")
             ? std::stoll(fields.at("uptime_in_seconds"))
             : -1;
}

TEST_F(SimRedisFaultTest, RunIdIsDeterministicPerSeed) {
  SimRedis same(SimRedis::Config{}, 42, now_);
  SimRedis other(SimRedis::Config{}, 43, now_);
  EXPECT_EQ(sim_.run_id(), same.run_id());
  EXPECT_NE(sim_.run_id(), other.run_id());
  EXPECT_EQ(sim_.run_id().size(), 40u);
  EXPECT_EQ(InfoFields(Run({"INFO", "server"}).str).at("run_id"),
            sim_.run_id());
}

TEST_F(SimRedisFaultTest, RestartWithoutDataForgetsEverything) {
  Run({"SCRIPT", "LOAD", std::string(internal::ReleaseScript().source)});
  Run({"SET", "lock", "tok", "PX", "10000"});
  Run({"SET", "fence", "5"});
  now_ += absl::Seconds(30);
  EXPECT_EQ(UptimeOf(Run({"INFO", "server"})), 30);
  const std::string old_run_id = sim_.run_id();

  sim_.Restart(now_, /*keep_data=*/false);
  conn_ = SimRedis::Connection{};
  EXPECT_NE(sim_.run_id(), old_run_id);
  EXPECT_EQ(UptimeOf(Run({"INFO", "server"})), 0);
  EXPECT_EQ(Run({"GET", "lock"}).type, RedisReply::Type::kNil);
  EXPECT_EQ(Run({"GET", "fence"}).type, RedisReply::Type::kNil);
  const RedisReply noscript =
      Run(CommandArgv(internal::ReleaseCommand("lock", "tok"), false));
  EXPECT_EQ(noscript.type, RedisReply::Type::kError);
  EXPECT_TRUE(absl::StartsWith(noscript.str, "NOSCRIPT ")) << noscript.str;
}

TEST_F(SimRedisFaultTest, RestartWithDataKeepsKeysAndTheirTtl) {
  Run({"SET", "lock", "tok", "PX", "10000"});
  Run({"SCRIPT", "LOAD", std::string(internal::ReleaseScript().source)});
  now_ += absl::Seconds(4);
  sim_.Restart(now_, /*keep_data=*/true);
  EXPECT_EQ(Run({"GET", "lock"}).str, "tok");
  EXPECT_EQ(Run({"PTTL", "lock"}).integer, 6000);
  EXPECT_FALSE(sim_.ScriptCached(internal::ReleaseScript().sha1));
  now_ += absl::Seconds(6);
  EXPECT_EQ(Run({"GET", "lock"}).type, RedisReply::Type::kNil);
}

TEST_F(SimRedisFaultTest, FastClockExpiresKeysEarly) {
  sim_.SetClockRate(now_, 2.0);
  Run({"SET", "lock", "tok", "PX", "1000"});
  now_ += absl::Milliseconds(400);
  EXPECT_EQ(Run({"PTTL", "lock"}).integer, 200);
  now_ += absl::Milliseconds(100);  // 1000ms of master time.
  EXPECT_EQ(Run({"GET", "lock"}).type, RedisReply::Type::kNil);
  // Back to an accurate rate: the clock continues from where it is.
  sim_.SetClockRate(now_, 1.0);
  const absl::Time master = sim_.MasterNow(now_);
  now_ += absl::Seconds(1);
  EXPECT_EQ(sim_.MasterNow(now_), master + absl::Seconds(1));
}

TEST_F(SimRedisFaultTest, ClockJumpExpiresKeysAndMovesTime) {
  Run({"SET", "lock", "tok", "PX", "10000"});
  Run({"SET", "keep", "v"});
  const RedisReply before = Run({"TIME"});
  sim_.JumpClock(absl::Seconds(10));
  EXPECT_EQ(Run({"GET", "lock"}).type, RedisReply::Type::kNil);
  EXPECT_EQ(Run({"GET", "keep"}).str, "v");
  const RedisReply after = Run({"TIME"});
  EXPECT_EQ(
      std::stoll(after.elements[0].str) - std::stoll(before.elements[0].str),
      10);
  // A backward jump lengthens what is left of a TTL.
  Run({"SET", "lock", "tok", "PX", "1000"});
  sim_.JumpClock(absl::Seconds(-1));
  EXPECT_EQ(Run({"PTTL", "lock"}).integer, 2000);
}

TEST_F(SimRedisFaultTest, EvictionDropsOnlyKeysWithTtl) {
  Run({"SET", "lock", "tok", "PX", "10000"});
  Run({"SET", "fence", "5"});
  Run({"SELECT", "2"});
  Run({"SET", "lock2", "tok", "PX", "10000"});
  sim_.EvictVolatileKeys();
  EXPECT_EQ(Run({"GET", "lock2"}).type, RedisReply::Type::kNil);
  Run({"SELECT", "0"});
  EXPECT_EQ(Run({"GET", "lock"}).type, RedisReply::Type::kNil);
  EXPECT_EQ(Run({"GET", "fence"}).str, "5");
  EXPECT_EQ(sim_.KeyCount(now_), 1);
}

TEST_F(SimRedisFaultTest, FlushScriptsAndConfiguredPolicy) {
  SimRedis::Config config;
  config.maxmemory_policy = "volatile-lru";
  SimRedis sim(config, 1, now_);
  const RedisReply info = sim.Execute(now_, conn_, {"INFO", "memory"});
  EXPECT_EQ(InfoFields(info.str).at("maxmemory_policy"), "volatile-lru");
  sim.Execute(now_, conn_,
              {"SCRIPT", "LOAD", std::string(internal::MarkerScript().source)});
  EXPECT_TRUE(sim.ScriptCached(internal::MarkerScript().sha1));
  sim.FlushScripts();
  EXPECT_FALSE(sim.ScriptCached(internal::MarkerScript().sha1));
}

TEST_F(SimRedisFaultTest, RestartEndsEverySubscription) {
  SimRedis::Connection subscriber;
  sim_.Execute(now_, subscriber, {"SUBSCRIBE", "lock"});
  Run({"PUBLISH", "lock", "before"});
  sim_.Restart(now_, /*keep_data=*/true);
  EXPECT_TRUE(sim_.TakePushes().empty());
  EXPECT_EQ(sim_.Subscribers("lock"), 0);
  EXPECT_EQ(sim_.Subscriptions(subscriber), 0);
  EXPECT_EQ(Run({"PUBLISH", "lock", "after"}).integer, 0);
  EXPECT_TRUE(sim_.TakePushes().empty());
}

TEST_F(SimRedisFaultTest, DisconnectEndsOnlyThatConnectionsSubscriptions) {
  SimRedis::Connection gone, staying;
  sim_.Execute(now_, gone, {"SUBSCRIBE", "a"});
  sim_.Execute(now_, gone, {"SUBSCRIBE", "b"});
  sim_.Execute(now_, staying, {"SUBSCRIBE", "a"});
  EXPECT_NE(gone.id, staying.id);
  sim_.Disconnect(gone);
  EXPECT_EQ(sim_.Subscribers("a"), 1);
  EXPECT_EQ(sim_.Subscribers("b"), 0);
  EXPECT_EQ(Run({"PUBLISH", "a", "hi"}).integer, 1);
  const std::vector<SimRedis::Push> pushes = sim_.TakePushes();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].connection, staying.id);
  EXPECT_EQ(pushes[0].reply.elements[2].str, "hi");
  EXPECT_TRUE(sim_.TakePushes().empty());
}

// Persistence, on the simulator alone: what Crash() and Restart() keep.
class SimRedisPersistenceTest : public ::testing::Test {
 protected:
  void Start(SimRedis::Config config) {
    sim_ = std::make_unique<SimRedis>(std::move(config), 5, now_);
    conn_ = SimRedis::Connection{};
  }
  RedisReply Run(const Argv& argv) { return sim_->Execute(now_, conn_, argv); }
  // The value of `key` now, or "(nil)".
  std::string Get(const std::string& key) {
    const RedisReply r = Run({"GET", key});
    return r.type == RedisReply::Type::kString ? r.str : "(nil)";
  }
  void CrashAndRestart(std::optional<absl::Duration> aof_lost = std::nullopt) {
    sim_->Crash(now_, aof_lost);
    now_ += absl::Milliseconds(300);
    sim_->Restart(now_);
    conn_ = SimRedis::Connection{};
  }

  absl::Time now_ = absl::FromUnixSeconds(1790000000);
  std::unique_ptr<SimRedis> sim_;
  SimRedis::Connection conn_;
};

TEST_F(SimRedisPersistenceTest, AofAlwaysKeepsEveryWriteAndNoneKeepsNothing) {
  Start(SimWith(SimRedis::Persistence::kAofAlways));
  Run({"SET", "marker", "trusted:1"});
  now_ += absl::Milliseconds(10);
  Run({"SET", "lock", "tok", "PX", "10000"});
  const std::string run_id = sim_->run_id();
  CrashAndRestart();
  EXPECT_NE(sim_->run_id(), run_id);
  EXPECT_EQ(Get("marker"), "trusted:1");
  EXPECT_EQ(Get("lock"), "tok");

  Start(SimWith(SimRedis::Persistence::kNone));
  Run({"SET", "marker", "trusted:1"});
  now_ += absl::Seconds(5);
  CrashAndRestart();
  EXPECT_EQ(Get("marker"), "(nil)");
}

TEST_F(SimRedisPersistenceTest, AofEverysecLosesTheWritesOfItsLastWindow) {
  Start(SimWith(SimRedis::Persistence::kAofEverysec));  // Window: 1s.
  Run({"SET", "marker", "trusted:1"});
  Run({"SET", "fence", "4"});
  Run({"SET", "gone", "x"});
  now_ += absl::Seconds(3);
  // The last second: a new lock, a counter raised, a key deleted, a TTL
  // moved.
  Run({"SET", "lock", "tok", "PX", "10000"});
  Run({"SET", "fence", "5"});
  Run({"DEL", "gone"});
  Run({"PEXPIRE", "marker", "60000"});
  now_ += absl::Milliseconds(500);
  CrashAndRestart();
  EXPECT_EQ(Get("marker"), "trusted:1");
  EXPECT_EQ(Run({"PTTL", "marker"}).integer, -1);
  EXPECT_EQ(Get("lock"), "(nil)");
  EXPECT_EQ(Get("fence"), "4");
  EXPECT_EQ(Get("gone"), "x");
}

TEST_F(SimRedisPersistenceTest, AofEverysecLosesOnlyTheWindowACrashIsGiven) {
  Start(SimWith(SimRedis::Persistence::kAofEverysec));
  Run({"SET", "older", "1"});
  now_ += absl::Milliseconds(600);
  Run({"SET", "newer", "2"});
  now_ += absl::Milliseconds(300);
  // Lost: the last 0.5s only; "older" (0.9s ago) and "newer" (0.3s) differ.
  CrashAndRestart(absl::Milliseconds(500));
  EXPECT_EQ(Get("older"), "1");
  EXPECT_EQ(Get("newer"), "(nil)");
  // Nothing lost: every write survives.
  Run({"SET", "k", "v"});
  CrashAndRestart(absl::ZeroDuration());
  EXPECT_EQ(Get("k"), "v");
  EXPECT_EQ(Get("older"), "1");
}

TEST_F(SimRedisPersistenceTest, RdbRestartsWithTheLastSnapshotOfItsSchedule) {
  Start(SimWith(SimRedis::Persistence::kRdb, {{1, 1}}));  // "save 1 1"
  Run({"SET", "marker", "trusted:1"});
  EXPECT_EQ(sim_->snapshots(), 0);
  now_ += absl::Milliseconds(1200);
  // Due at 1s (one change, one second): taken before this write.
  Run({"SET", "lock", "tok", "PX", "10000"});
  EXPECT_EQ(sim_->snapshots(), 1);
  now_ += absl::Milliseconds(500);
  // The next is due at 2s: the crash at 1.7s comes first.
  CrashAndRestart();
  EXPECT_EQ(sim_->snapshots(), 1);
  EXPECT_EQ(Get("marker"), "trusted:1");
  EXPECT_EQ(Get("lock"), "(nil)");
  // The snapshot stays on disk across a start with no new one.
  CrashAndRestart();
  EXPECT_EQ(Get("marker"), "trusted:1");
}

TEST_F(SimRedisPersistenceTest, RdbSnapshotFallingDueBeforeACrashIsTaken) {
  Start(SimWith(SimRedis::Persistence::kRdb, {{1, 1}}));
  Run({"SET", "marker", "trusted:1"});
  now_ += absl::Milliseconds(400);
  Run({"SET", "lock", "tok", "PX", "10000"});
  // No command after 1s, yet the schedule ran: the crash at 1.5s finds the
  // snapshot of 1s with both keys.
  now_ += absl::Milliseconds(1100);
  CrashAndRestart();
  EXPECT_EQ(sim_->snapshots(), 1);
  EXPECT_EQ(Get("marker"), "trusted:1");
  EXPECT_EQ(Get("lock"), "tok");
}

TEST_F(SimRedisPersistenceTest,
       RdbWithoutASnapshotRestartsEmptyAndSaveTakesOne) {
  Start(SimWith(SimRedis::Persistence::kRdb));  // save "": Save() only.
  Run({"SET", "marker", "trusted:1"});
  now_ += absl::Seconds(30);
  CrashAndRestart();
  EXPECT_EQ(Get("marker"), "(nil)");
  Run({"SET", "marker", "trusted:2"});
  sim_->Save(now_);
  Run({"SET", "later", "x"});
  CrashAndRestart();
  EXPECT_EQ(Get("marker"), "trusted:2");
  EXPECT_EQ(Get("later"), "(nil)");
}

// INFO persistence says how many keys the start loaded from a snapshot, as
// Redis 7.0 does (rdb_last_load_keys_loaded): save "" with a snapshot taken
// by hand is not an empty start.
TEST_F(SimRedisPersistenceTest,
       InfoSaysHowManyKeysTheStartLoadedFromASnapshot) {
  auto loaded = [&] {
    const RedisReply reply = Run({"INFO", "persistence"});
    EXPECT_TRUE(absl::StartsWith(reply.str, "# Persistence\r\n"));
    const auto fields = InfoFields(reply.str);
    return fields.count("rdb_last_load_keys_loaded")
               ? fields.at("rdb_last_load_keys_loaded")
               : "unsaid";
  };
  Start(SimWith(SimRedis::Persistence::kRdb));  // save "": Save() only.
  EXPECT_EQ(loaded(), "0");
  Run({"SET", "counter", "1"});
  Run({"SET", "lock", "tok", "PX", "100"});
  Run({"SET", "other", "x"});
  sim_->Save(now_);
  now_ += absl::Milliseconds(200);  // The lock expires before the start.
  CrashAndRestart();
  EXPECT_EQ(loaded(), "2");
  Start(SimWith(SimRedis::Persistence::kNone));
  Run({"SET", "counter", "1"});
  CrashAndRestart();
  EXPECT_EQ(loaded(), "0");
  Start(SimWith(SimRedis::Persistence::kAofAlways));
  Run({"SET", "counter", "1"});
  CrashAndRestart();
  EXPECT_EQ(Get("counter"), "1");
  EXPECT_EQ(loaded(), "0");  // Replayed from the AOF, not loaded from an RDB.
}

TEST_F(SimRedisPersistenceTest, RestartWithKeepDataOverridesThePersistence) {
  Start(SimWith(SimRedis::Persistence::kNone));
  Run({"SET", "k", "v"});
  sim_->Restart(now_, /*keep_data=*/true);
  EXPECT_EQ(Get("k"), "v");
  Start(SimWith(SimRedis::Persistence::kAofAlways));
  Run({"SET", "k", "v"});
  sim_->Restart(now_, /*keep_data=*/false);
  EXPECT_EQ(Get("k"), "(nil)");
}

TEST_F(SimRedisPersistenceTest,
       ConfigGetOrderChangesFromStartToStartNotItsPairs) {
  Start(SimWith(SimRedis::Persistence::kAofEverysec));
  std::set<std::string> orders;
  std::optional<ConfigPairs> first;
  for (int i = 0; i < 10; ++i) {
    const RedisReply reply = Run({"CONFIG", "GET", "append*"});
    std::string order;
    for (const RedisReply& e : reply.elements)
      absl::StrAppend(&order, e.str, ",");
    orders.insert(order);
    const std::optional<ConfigPairs> pairs = PairsOf(reply);
    ASSERT_TRUE(pairs.has_value());
    if (!first.has_value()) first = pairs;
    EXPECT_EQ(*pairs, *first);
    CrashAndRestart();
  }
  EXPECT_GT(orders.size(), 1u);
  EXPECT_EQ(
      Format(*first),
      " appenddirname=\"appendonlydir\" appendfilename=\"appendonly.aof\" "
      "appendfsync=\"everysec\" appendonly=\"yes\"");
}

TEST_F(SimRedisFaultTest, OtherScriptsAreRefused) {
  const RedisReply reply = Run({"EVAL", "return 1", "0"});
  EXPECT_EQ(reply.type, RedisReply::Type::kError);
  EXPECT_TRUE(absl::StartsWith(reply.str, "ERR ")) << reply.str;
}

}  // namespace
}  // namespace redlock::sim
