// Copyright 2026 The redlock Authors.
//
// One master's connection on a real redis-server: replies, its own timeouts,
// reconnection, the handshake (AUTH, SELECT, SCRIPT LOAD) and the EVAL
// fallback after SCRIPT FLUSH.

#include "src/engine/master.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "src/algorithm/scripts.h"
#include "src/transport/libevent_runtime.h"
#include "tests/support/hostile_peer.h"
#include "tests/support/loop_runner.h"
#include "tests/support/redis_server.h"

namespace redlock::internal {
namespace {

using ::redlock::testing::LoopRunner;
using ::redlock::testing::RedisServer;

class MasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can stop and kill";
    }
    StartServer({});
  }

  void StartServer(RedisServer::Config config) {
    auto server = RedisServer::Start(std::move(config));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  MasterConfig Config(const std::string& uri) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    EXPECT_TRUE(address.ok()) << address.status();
    MasterConfig config;
    config.address = *address;
    config.request_timeout = absl::Milliseconds(200);
    config.connect_timeout = absl::Milliseconds(500);
    config.stalled_timeout = absl::Seconds(5);
    config.backoff.initial = absl::Milliseconds(10);
    config.backoff.max = absl::Milliseconds(50);
    return config;
  }

  void MakeMaster(MasterConfig config) {
    if (runtime_ == nullptr) {
      runtime_ = std::make_unique<LibeventRuntime>(loop_.base());
    }
    master_ = std::make_unique<Master>(runtime_.get(), std::move(config));
  }

  // Sends and waits for the answer.
  absl::StatusOr<RedisReply> Call(const Command& command,
                                  absl::Duration timeout = absl::Seconds(5)) {
    std::optional<absl::StatusOr<RedisReply>> result;
    master_->Send(command, [&](absl::StatusOr<RedisReply> r) {
      result.emplace(std::move(r));
    });
    EXPECT_TRUE(loop_.RunUntil([&] { return result.has_value(); }, timeout));
    if (!result.has_value()) return absl::InternalError("no answer");
    return *std::move(result);
  }

  std::optional<std::string> Get(const std::string& key, int db = 0) {
    auto client = server_->Client();
    EXPECT_TRUE(client.ok()) << client.status();
    if (db != 0)
      (*client)->Command({"SELECT", std::to_string(db)}).IgnoreError();
    auto value = (*client)->Get(key);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : std::nullopt;
  }

  LoopRunner loop_;
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<LibeventRuntime> runtime_;
  std::unique_ptr<Master> master_;
};

TEST_F(MasterTest, SetsTheKeyAndReturnsTheReply) {
  MakeMaster(Config(server_->Uri()));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "tok1", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->type, RedisReply::Type::kStatus);
  EXPECT_EQ(reply->str, "OK");
  EXPECT_EQ(Get("k"), "tok1");
  EXPECT_TRUE(master_->ready());
}

TEST_F(MasterTest, CallbackNeverRunsBeforeSendReturns) {
  ASSERT_TRUE(server_->Kill().ok());
  MakeMaster(Config(server_->Uri()));
  loop_.RunFor(absl::Milliseconds(50));  // Let the connect fail.
  bool called = false;
  absl::Status status;
  master_->Send(AcquireCommand("k", "t", absl::Seconds(1)),
                [&](absl::StatusOr<RedisReply> r) {
                  called = true;
                  status = r.status();
                });
  EXPECT_FALSE(called);
  ASSERT_TRUE(loop_.RunUntil([&] { return called; }));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("refused"), std::string::npos) << status;
}

TEST_F(MasterTest, ScriptFallsBackToEvalAfterScriptFlush) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("k", "tok", absl::Seconds(10))).ok());
  auto client = server_->Client();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Command({"SCRIPT", "FLUSH"}).ok());
  absl::StatusOr<RedisReply> reply = Call(ReleaseCommand("k", "tok"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->type, RedisReply::Type::kInteger);
  EXPECT_EQ(reply->integer, 1);
  EXPECT_EQ(master_->counters().noscript_fallbacks, 1);
  EXPECT_EQ(Get("k"), std::nullopt);
  // EVAL cached the script again: the next call needs no fallback.
  ASSERT_TRUE(Call(ReleaseCommand("k", "tok")).ok());
  EXPECT_EQ(master_->counters().noscript_fallbacks, 1);
}

TEST_F(MasterTest, StoppedServerIsATimeoutAndTheQueuedReleaseStillLands) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Stop().ok());
  absl::StatusOr<RedisReply> set =
      Call(AcquireCommand("k", "late", absl::Seconds(30)));
  EXPECT_EQ(set.status().code(), absl::StatusCode::kDeadlineExceeded)
      << set.status();
  // The release queues behind the SET the server has not run yet.
  std::optional<absl::StatusOr<RedisReply>> release;
  master_->Send(ReleaseCommand("k", "late"),
                [&](absl::StatusOr<RedisReply> r) { release.emplace(r); });
  loop_.RunFor(absl::Milliseconds(20));
  ASSERT_TRUE(server_->Continue().ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return release.has_value(); }));
  // Either it answered in time or it timed out; on the server the SET ran
  // first and the release after it, so no key is left.
  EXPECT_EQ(Get("k"), std::nullopt);
}

TEST_F(MasterTest, ServerStoppedBeforeConnectingTimesOutAtTheRequestTimeout) {
  // The kernel completes the TCP handshake, so the connection "succeeds";
  // only the handshake steps and our request hang. The request must fail at
  // request_timeout (200ms), not at stalled_timeout (5s).
  ASSERT_TRUE(server_->Stop().ok());
  MakeMaster(Config(server_->Uri()));
  // Connected, with only the handshake pending when the request comes.
  loop_.RunFor(absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded)
      << reply.status();
  EXPECT_LT(took, absl::Seconds(2));  // Generous: not the 5s stall.
  ASSERT_TRUE(server_->Continue().ok());
}

TEST_F(MasterTest, StalledConnectionIsClosedFlushedAndReconnected) {
  MasterConfig config = Config(server_->Uri());
  config.stalled_timeout = absl::Milliseconds(400);
  MakeMaster(config);
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Stop().ok());
  EXPECT_EQ(
      Call(AcquireCommand("k", "late", absl::Seconds(30))).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  std::optional<absl::Status> release;
  master_->Send(ReleaseCommand("k", "late"),
                [&](absl::StatusOr<RedisReply> r) { release = r.status(); });
  // The stalled connection is closed after 400ms...
  ASSERT_TRUE(loop_.RunUntil([&] { return !master_->ready(); }));
  ASSERT_TRUE(server_->Continue().ok());
  // ...and a new one is made once the server answers again.
  ASSERT_TRUE(loop_.RunUntil([&] { return master_->ready(); }));
  EXPECT_GE(master_->counters().connects, 2);
  ASSERT_TRUE(release.has_value());
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k2", "fresh", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  // The release was written before closing: the late SET left no key.
  EXPECT_EQ(Get("k"), std::nullopt);
}

TEST_F(MasterTest, KilledServerFailsRequestsThenReconnectsAfterRestart) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Kill().ok());
  loop_.RunFor(absl::Milliseconds(30));
  absl::StatusOr<RedisReply> down =
      Call(AcquireCommand("k", "t", absl::Seconds(1)));
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(server_->Restart().ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return master_->ready(); }));
  absl::StatusOr<RedisReply> up =
      Call(AcquireCommand("k", "t", absl::Seconds(1)));
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->str, "OK");
}

TEST_F(MasterTest, DestroyingTheMasterAnswersPendingRequestsCancelled) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("warmup", "x", absl::Seconds(1))).ok());
  ASSERT_TRUE(server_->Stop().ok());
  int calls = 0;
  absl::Status status;
  master_->Send(AcquireCommand("k", "t", absl::Seconds(1)),
                [&](absl::StatusOr<RedisReply> r) {
                  ++calls;
                  status = r.status();
                });
  master_.reset();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(server_->Continue().ok());
}

TEST_F(MasterTest, SelectsTheDatabaseFromTheUri) {
  MakeMaster(Config(server_->Uri() + "/3"));
  ASSERT_TRUE(Call(AcquireCommand("k", "in-db-3", absl::Seconds(10))).ok());
  EXPECT_EQ(Get("k", 0), std::nullopt);
  EXPECT_EQ(Get("k", 3), "in-db-3");
}

class MasterAuthTest : public MasterTest {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "needs servers it can configure";
    }
    RedisServer::Config config;
    config.requirepass = "s3cret";
    StartServer(config);
  }
  std::string PlainUri() const {
    return "redis://127.0.0.1:" + std::to_string(server_->port());
  }
};

TEST_F(MasterAuthTest, RightPasswordWorks) {
  MakeMaster(Config(server_->Uri()));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->str, "OK");
}

TEST_F(MasterAuthTest, WrongPasswordIsAClearError) {
  MakeMaster(
      Config("redis://:wrong@127.0.0.1:" + std::to_string(server_->port())));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnauthenticated)
      << reply.status();
  EXPECT_NE(reply.status().message().find("AUTH failed"), std::string::npos)
      << reply.status();
  EXPECT_NE(reply.status().message().find("WRONGPASS"), std::string::npos)
      << reply.status();
  EXPECT_FALSE(master_->ready());
}

TEST_F(MasterAuthTest, MissingPasswordIsANoauthError) {
  MakeMaster(Config(PlainUri()));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("NOAUTH"), std::string::npos)
      << reply.status();
}

TEST_F(MasterAuthTest, AclUserAndPasswordWork) {
  auto admin = server_->Client();
  ASSERT_TRUE(admin.ok()) << admin.status();
  auto acl = (*admin)->Command(
      {"ACL", "SETUSER", "locker", "on", ">pw", "~*", "+@all"});
  ASSERT_TRUE(acl.ok() && !acl->is_error()) << acl->DebugString();
  MakeMaster(
      Config("redis://locker:pw@127.0.0.1:" + std::to_string(server_->port())));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->str, "OK");
}

}  // namespace
}  // namespace redlock::internal

namespace redlock::internal {
namespace {

TEST(TimeReplyTest, ReadsTwoNumbersAndRefusesWhatWouldOverflowOrIsMalformed) {
  using internal::RedisReply;
  auto time = [](std::string s, std::string us) {
    return RedisReply::Array(
        {RedisReply::String(std::move(s)), RedisReply::String(std::move(us))});
  };
  EXPECT_EQ(internal::TimeReplyMicros(time("1700000000", "123456")),
            int64_t{1700000000123456});
  // Seconds * 10^6 would overflow int64 (undefined behaviour before).
  EXPECT_EQ(internal::TimeReplyMicros(time("9223372036854775807", "0")),
            std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(time("9223372036854", "999999")),
            std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(time("-1", "0")), std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(time("1", "1000000")), std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(time("1", "-1")), std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(time("x", "1")), std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(RedisReply::Integer(1)), std::nullopt);
  EXPECT_EQ(internal::TimeReplyMicros(RedisReply::Array(
                {RedisReply::Integer(1), RedisReply::Integer(2)})),
            std::nullopt);
}

TEST(ParseInfoServerTest, ReadsRunIdAndUptime) {
  std::string run_id;
  int64_t uptime = -1;
  ParseInfoServer(
      "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\n"
      "uptime_in_seconds:42\r\nuptime_in_days:0\r\n",
      &run_id, &uptime);
  EXPECT_EQ(run_id, "abc123");
  EXPECT_EQ(uptime, 42);
}

TEST(ParseInfoPersistenceTest, ReadsTheKeysLoadedAndOnlyACount) {
  EXPECT_EQ(ParseRdbKeysLoaded("# Persistence\r\nloading:0\r\n"
                               "rdb_last_load_keys_expired:2\r\n"
                               "rdb_last_load_keys_loaded:17\r\n"),
            17);
  EXPECT_EQ(ParseRdbKeysLoaded("rdb_last_load_keys_loaded:0\r\n"), 0);
  // Redis before 7.0 has no such field; a server that does not say is not
  // known to have started empty.
  EXPECT_EQ(ParseRdbKeysLoaded("# Persistence\r\nloading:0\r\n"), -1);
  EXPECT_EQ(ParseRdbKeysLoaded(""), -1);
  EXPECT_EQ(ParseRdbKeysLoaded("rdb_last_load_keys_loaded:-3\r\n"), -1);
  EXPECT_EQ(ParseRdbKeysLoaded("rdb_last_load_keys_loaded:many\r\n"), -1);
}

TEST(ParseMarkerTest, ReadsTheStateTheTimeAndTheRunIdOfEachForm) {
  std::string state, run_id = "x";
  int64_t time_us = -1;
  ParseMarker("trusted:1764470000123456:abc123", &state, &time_us, &run_id);
  EXPECT_EQ(state, "trusted");
  EXPECT_EQ(time_us, 1764470000123456);
  EXPECT_EQ(run_id, "abc123");
  // Written before markers carried a run_id.
  ParseMarker("reborn:1764470000123456", &state, &time_us, &run_id);
  EXPECT_EQ(state, "reborn");
  EXPECT_EQ(time_us, 1764470000123456);
  EXPECT_EQ(run_id, "");
  // An operator's: the state alone, or vouching for one process.
  ParseMarker("trusted", &state, &time_us, &run_id);
  EXPECT_EQ(state, "trusted");
  EXPECT_EQ(time_us, 0);
  EXPECT_EQ(run_id, "");
  ParseMarker("trusted:0:abc123", &state, &time_us, &run_id);
  EXPECT_EQ(time_us, 0);
  EXPECT_EQ(run_id, "abc123");
  // The writing client's max_ttl, since markers carry it.
  int64_t max_ttl_ms = -1;
  ParseMarker("trusted:1764470000123456:abc123:3600000", &state, &time_us,
              &run_id, &max_ttl_ms);
  EXPECT_EQ(run_id, "abc123");
  EXPECT_EQ(max_ttl_ms, 3600000);
  ParseMarker("trusted:0:abc123", &state, &time_us, &run_id, &max_ttl_ms);
  EXPECT_EQ(max_ttl_ms, 0);
}

MasterIdentity Marked(std::string marker_run_id, int64_t uptime_s,
                      int64_t marker_age_s) {
  MasterIdentity id;
  id.known = true;
  id.run_id = "now";
  id.marker = "trusted";
  id.marker_run_id = std::move(marker_run_id);
  id.uptime_s = uptime_s;
  id.server_time_us = 2000000000000000;
  id.marker_time_us = id.server_time_us - marker_age_s * 1000000;
  return id;
}

TEST(RestartedSinceMarkedTest, ARunIdInTheMarkerDecidesExactly) {
  // Whatever the uptime says: the process is the one that was marked, or not.
  EXPECT_EQ(RestartedSinceMarked(Marked("now", 1, 100)), Restarted::kNo);
  EXPECT_EQ(RestartedSinceMarked(Marked("before", 500, 100)), Restarted::kYes);
}

TEST(RestartedSinceMarkedTest, AnOlderDatedMarkerIsJudgedByUptimeOrNotAtAll) {
  EXPECT_EQ(RestartedSinceMarked(Marked("", 100, 50)), Restarted::kNo);
  EXPECT_EQ(RestartedSinceMarked(Marked("", 50, 100)), Restarted::kYes);
  // Within INFO's whole-second uncertainty: cannot tell.
  EXPECT_EQ(RestartedSinceMarked(Marked("", 100, 100)), Restarted::kUnknown);
  EXPECT_EQ(RestartedSinceMarked(Marked("", 101, 100)), Restarted::kUnknown);
  EXPECT_EQ(RestartedSinceMarked(Marked("", 99, 100)), Restarted::kUnknown);
  // A marker from the server's future (its clock went back): cannot tell.
  EXPECT_EQ(RestartedSinceMarked(Marked("", 100, -50)), Restarted::kUnknown);
  // Undated (an operator's bare "trusted"): cannot tell.
  MasterIdentity undated = Marked("", 100, 50);
  undated.marker_time_us = 0;
  EXPECT_EQ(RestartedSinceMarked(undated), Restarted::kUnknown);
}

RedisReply ConfigReply(std::vector<std::string> pairs) {
  RedisReply reply;
  reply.type = RedisReply::Type::kArray;
  for (std::string& s : pairs) {
    reply.elements.push_back(RedisReply::String(std::move(s)));
  }
  return reply;
}

TEST(DurabilityTest, OnlyAofWithAppendfsyncAlwaysIsDurable) {
  Persistence p;
  ParseConfigPersistence(
      ConfigReply({"appendonly", "yes", "appendfilename", "appendonly.aof",
                   "appendfsync", "always"}),
      &p);
  EXPECT_TRUE(DurabilityRisk(p).ok()) << DurabilityRisk(p);
  EXPECT_EQ(DescribePersistence(p), "aof always");

  ParseConfigPersistence(
      ConfigReply({"appendfsync", "everysec", "appendonly", "yes"}), &p);
  EXPECT_TRUE(p.known);
  EXPECT_NE(DurabilityRisk(p).message().find("appendfsync everysec"),
            std::string::npos)
      << DurabilityRisk(p);
  EXPECT_NE(DurabilityRisk(p).message().find("max_ttl"), std::string::npos);

  ParseConfigPersistence(
      ConfigReply({"appendonly", "no", "appendfsync", "always"}), &p);
  EXPECT_EQ(DurabilityRisk(p).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(DescribePersistence(p), "no aof");  // `save` not asked.
  ParseConfigPersistence(
      ConfigReply({"appendonly", "no", "save", "", "appendfsync", "always"}),
      &p);
  EXPECT_EQ(DescribePersistence(p), "no aof, no rdb");
  ParseConfigPersistence(ConfigReply({"save", "3600 1", "appendonly", "no"}),
                         &p);
  EXPECT_EQ(DescribePersistence(p), "no aof, rdb save \"3600 1\"");
}

// Empty after a restart: the configuration says so (no AOF, save "") and the
// server's start loaded no key. save "" does not keep Redis from loading a
// dump.rdb it finds (a SAVE by hand), and a server that does not say what
// it loaded is not known to be empty.
TEST(DurabilityTest,
     EmptyAfterRestartNeedsTheConfigAndAStartThatLoadedNothing) {
  MasterIdentity id;
  id.rdb_keys_loaded = 0;
  ParseConfigPersistence(ConfigReply({"appendonly", "no", "save", ""}),
                         &id.persistence);
  EXPECT_TRUE(EmptyAfterRestart(id));
  EXPECT_EQ(WhyNotEmptyAfterRestart(id), "");

  id.rdb_keys_loaded = 3;
  EXPECT_FALSE(EmptyAfterRestart(id));
  EXPECT_NE(WhyNotEmptyAfterRestart(id).find("loaded 3 keys"),
            std::string::npos)
      << WhyNotEmptyAfterRestart(id);
  id.rdb_keys_loaded = -1;
  EXPECT_FALSE(EmptyAfterRestart(id));
  EXPECT_NE(WhyNotEmptyAfterRestart(id).find("rdb_last_load_keys_loaded"),
            std::string::npos)
      << WhyNotEmptyAfterRestart(id);

  id.rdb_keys_loaded = 0;
  for (const std::vector<std::string>& config :
       {std::vector<std::string>{"appendonly", "no"},  // `save` not said.
        std::vector<std::string>{"appendonly", "no", "save", "3600 1"},
        std::vector<std::string>{"appendonly", "yes", "appendfsync", "everysec",
                                 "save", ""}}) {
    ParseConfigPersistence(ConfigReply(config), &id.persistence);
    EXPECT_FALSE(EmptyAfterRestart(id)) << config[1];
    EXPECT_NE(WhyNotEmptyAfterRestart(id).find("persistence "),
              std::string::npos);
  }
  ParseConfigPersistence(RedisReply::Error("NOPERM no"), &id.persistence);
  EXPECT_FALSE(EmptyAfterRestart(id));
}

TEST(DurabilityTest, UnknownPersistenceIsNotDurableAndNamesThePermission) {
  Persistence p;
  ParseConfigPersistence(
      RedisReply::Error("NOPERM this user has no permissions to run the "
                        "'config|get' command"),
      &p);
  EXPECT_FALSE(p.known);
  EXPECT_EQ(DurabilityRisk(p).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(DurabilityRisk(p).message().find("+config|get"), std::string::npos);
  EXPECT_NE(DurabilityRisk(p).message().find("NOPERM"), std::string::npos);
  // Not the pairs CONFIG GET gives: unknown, not guessed.
  ParseConfigPersistence(ConfigReply({"appendonly"}), &p);
  EXPECT_FALSE(p.known);
  ParseConfigPersistence(ConfigReply({"appendfsync", "always"}), &p);
  EXPECT_FALSE(p.known);
  ParseConfigPersistence(RedisReply::Integer(1), &p);
  EXPECT_FALSE(p.known);
  EXPECT_FALSE(DurabilityRisk(p).ok());
}

// The handshake asks for each of kPersistenceConfigNames alone and judges
// the replies as one: the pairs together, and any refusal (or a reply of
// another shape) for all, whatever the others said.
TEST(DurabilityTest, OneConfigGetPerNameIsJudgedAsOneReply) {
  Persistence p;
  RedisReply merged = RedisReply::Array({});
  AddConfigReply(ConfigReply({"appendonly", "yes"}), &merged);
  AddConfigReply(ConfigReply({"appendfsync", "always"}), &merged);
  AddConfigReply(ConfigReply({"save", ""}), &merged);
  ParseConfigPersistence(merged, &p);
  EXPECT_TRUE(p.known);
  EXPECT_TRUE(DurabilityRisk(p).ok()) << DurabilityRisk(p);

  for (int refused = 0; refused < 3; ++refused) {
    merged = RedisReply::Array({});
    const std::vector<RedisReply> replies = {
        ConfigReply({"appendonly", "yes"}),
        ConfigReply({"appendfsync", "always"}), ConfigReply({"save", ""})};
    for (int i = 0; i < 3; ++i) {
      AddConfigReply(i == refused ? RedisReply::Error("NOPERM no config|get")
                                  : replies[i],
                     &merged);
    }
    ParseConfigPersistence(merged, &p);
    EXPECT_FALSE(p.known) << "refused: " << refused;
    EXPECT_NE(DurabilityRisk(p).message().find("NOPERM"), std::string::npos)
        << "refused: " << refused;
  }
  // Not an array nor an error: unknown, even after two good replies.
  merged = RedisReply::Array({});
  AddConfigReply(ConfigReply({"appendonly", "yes"}), &merged);
  AddConfigReply(ConfigReply({"appendfsync", "always"}), &merged);
  AddConfigReply(RedisReply::Nil(), &merged);
  ParseConfigPersistence(merged, &p);
  EXPECT_FALSE(p.known);
}

}  // namespace
}  // namespace redlock::internal

namespace redlock::internal {
namespace {

TEST_F(MasterTest, ConnectionsAreNotInheritedByChildProcesses) {
  MakeMaster(Config(server_->Uri()));
  ASSERT_TRUE(Call(AcquireCommand("k", "t", absl::Seconds(10))).ok());
  // Every socket of this process connected to the server's port must be
  // close-on-exec.
  int checked = 0;
  for (int fd = 0; fd < 1024; ++fd) {
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 ||
        peer.sin_family != AF_INET || ntohs(peer.sin_port) != server_->port()) {
      continue;
    }
    // The test's own blocking clients are closed by now; only the master's
    // connection remains.
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC) << "fd " << fd;
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

TEST_F(MasterTest, HugeArrayHeaderClosesTheConnectionInsteadOfAllocating) {
  auto peer = std::make_unique<testing::HugeHeaderPeer>();
  ASSERT_NE(peer->port(), 0);
  MakeMaster(Config("redis://127.0.0.1:" + std::to_string(peer->port())));
  absl::StatusOr<RedisReply> reply =
      Call(AcquireCommand("k", "t", absl::Seconds(10)));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(master_->last_error().message().find("reply refused"),
            std::string::npos)
      << "reply: " << reply.status()
      << "; last error: " << master_->last_error();
  EXPECT_FALSE(master_->ready());
  master_.reset();  // Closes the connection, so the peer's thread ends.
}

}  // namespace
}  // namespace redlock::internal
