// Copyright 2026 The redlock Authors.
//
// SimRedis against a real redis-server: the same command sequences go to
// both and the replies must match in type and value, except what cannot
// match (run_id, clock readings, uptime), which is compared by shape. Then
// the faults, which a real server cannot be asked for so cheaply, on the
// simulator alone.

#include "tests/sim/sim_redis.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/fencing.h"
#include "redlock/keys.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "tests/sim/unsafe_rules.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"

namespace redlock::sim {
namespace {

using internal::AllScripts;
using internal::CommandArgv;
using internal::RedisReply;
using testing::RedisClient;
using testing::RedisServer;
using testing::Reply;
using Argv = std::vector<std::string>;

// Reply::Type and RedisReply::Type list the same kinds in the same order.
std::string SimDebugString(const RedisReply& r) {
  switch (r.type) {
    case RedisReply::Type::kStatus:
      return absl::StrCat("+", r.str);
    case RedisReply::Type::kError:
      return absl::StrCat("-", r.str);
    case RedisReply::Type::kInteger:
      return absl::StrCat("(integer) ", r.integer);
    case RedisReply::Type::kString:
      return absl::StrCat("\"", r.str, "\"");
    case RedisReply::Type::kNil:
      return "(nil)";
    case RedisReply::Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += SimDebugString(r.elements[i]);
      }
      return out + "]";
    }
  }
  return "(unknown)";
}

bool SameType(const Reply& real, const RedisReply& sim) {
  return static_cast<int>(real.type) == static_cast<int>(sim.type);
}

// Exact equality of type and value, recursively.
bool SameReply(const Reply& real, const RedisReply& sim) {
  if (!SameType(real, sim)) return false;
  switch (sim.type) {
    case RedisReply::Type::kStatus:
    case RedisReply::Type::kError:
    case RedisReply::Type::kString:
      return real.str == sim.str;
    case RedisReply::Type::kInteger:
      return real.integer == sim.integer;
    case RedisReply::Type::kNil:
      return true;
    case RedisReply::Type::kArray:
      if (real.elements.size() != sim.elements.size()) return false;
      for (size_t i = 0; i < sim.elements.size(); ++i) {
        if (!SameReply(real.elements[i], sim.elements[i])) return false;
      }
      return true;
  }
  return false;
}

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

// "name:value" lines of an INFO reply. Every line must end in \r\n.
std::map<std::string, std::string> InfoFields(const std::string& info) {
  std::map<std::string, std::string> fields;
  EXPECT_TRUE(absl::EndsWith(info, "\r\n")) << info;
  for (absl::string_view line : absl::StrSplit(info, "\r\n")) {
    const size_t colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == line.npos) continue;
    fields[std::string(line.substr(0, colon))] =
        std::string(line.substr(colon + 1));
  }
  return fields;
}

// The command for a failure message, long script sources cut short.
std::string Describe(const Argv& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    absl::StrAppend(&out, " ",
                    arg.size() > 40 ? arg.substr(0, 37) + "..." : arg);
  }
  return out;
}

class SimRedisDifferentialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = RedisServer::Start({});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    auto client = server_->Client();
    ASSERT_TRUE(client.ok()) << client.status();
    real_ = std::move(*client);
    // Every test starts from an empty server, as its simulator does.
    for (const Argv& argv : {Argv{"FLUSHALL"}, Argv{"SCRIPT", "FLUSH"}}) {
      auto reply = real_->Command(argv);
      ASSERT_TRUE(reply.ok() && !reply->is_error());
    }
    now_ = absl::FromUnixSeconds(1790000000);
    sim_ = std::make_unique<SimRedis>(SimRedis::Config{}, /*seed=*/7, now_);
  }

  // A further client on both sides, for pub/sub.
  struct Peer {
    std::unique_ptr<RedisClient> real;
    SimRedis::Connection sim;
  };

  std::unique_ptr<Peer> NewPeer() {
    auto client = server_->Client();
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return nullptr;
    auto peer = std::make_unique<Peer>();
    peer->real = std::move(*client);
    return peer;
  }

  // Sends `argv` to both; returns false (with a test failure) if the real
  // connection failed.
  bool SendBoth(const Argv& argv, Reply* real, RedisReply* sim) {
    return SendBoth(*real_, conn_, argv, real, sim);
  }
  bool SendBoth(RedisClient& real_client, SimRedis::Connection& sim_conn,
                const Argv& argv, Reply* real, RedisReply* sim) {
    auto reply = real_client.Command(argv);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return false;
    *real = std::move(*reply);
    *sim = sim_->Execute(now_, sim_conn, argv);
    return true;
  }

  // Both must give the same reply, exactly.
  void Same(const Argv& argv) { SameOn(*real_, conn_, argv); }
  void SameOn(Peer& peer, const Argv& argv) {
    SameOn(*peer.real, peer.sim, argv);
  }
  void SameOn(RedisClient& real_client, SimRedis::Connection& sim_conn,
              const Argv& argv) {
    Reply real;
    RedisReply sim;
    if (!SendBoth(real_client, sim_conn, argv, &real, &sim)) return;
    EXPECT_TRUE(SameReply(real, sim))
        << Describe(argv) << "\n  real: " << real.DebugString()
        << "\n  sim:  " << SimDebugString(sim);
  }

  // What the server pushed to `peer` since the last look must be
  // `expected`, in order, on both sides. The real side reads up to the reply
  // of a PING sent now (the server writes a publish's messages before it
  // answers the publisher, so they are ahead of that reply); the PING's
  // replies must match too.
  void ExpectPushed(Peer& peer, const std::vector<RedisReply>& expected) {
    std::vector<Reply> real;
    absl::StatusOr<Reply> next = peer.real->Command({"PING"});
    for (; next.ok() && IsPush(*next); next = peer.real->ReadReply()) {
      real.push_back(std::move(*next));
    }
    ASSERT_TRUE(next.ok()) << next.status();
    const RedisReply pong = sim_->Execute(now_, peer.sim, {"PING"});
    EXPECT_TRUE(SameReply(*next, pong))
        << "PING\n  real: " << next->DebugString()
        << "\n  sim:  " << SimDebugString(pong);

    for (SimRedis::Push& push : sim_->TakePushes()) {
      pushed_.push_back(std::move(push));
    }
    std::vector<RedisReply> sim;
    for (auto it = pushed_.begin(); it != pushed_.end();) {
      if (it->connection == peer.sim.id && peer.sim.id != 0) {
        sim.push_back(std::move(it->reply));
        it = pushed_.erase(it);
      } else {
        ++it;
      }
    }

    std::string want;
    for (const RedisReply& r : expected)
      absl::StrAppend(&want, " ", SimDebugString(r));
    ASSERT_EQ(real.size(), expected.size()) << "expected" << want;
    ASSERT_EQ(sim.size(), expected.size()) << "expected" << want;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(SameReply(real[i], expected[i]))
          << "real: " << real[i].DebugString() << "\nexpected:" << want;
      EXPECT_EQ(SimDebugString(sim[i]), SimDebugString(expected[i]));
    }
  }

  static bool IsPush(const Reply& r) {
    return r.type == Reply::Type::kArray && !r.elements.empty() &&
           r.elements[0].str != "pong";
  }

  // Both must give an integer within [sim - slack, sim]: real time passes
  // between the two calls, simulated time does not.
  void CloseInteger(const Argv& argv, int64_t slack) {
    Reply real;
    RedisReply sim;
    if (!SendBoth(argv, &real, &sim)) return;
    ASSERT_EQ(real.type, Reply::Type::kInteger) << real.DebugString();
    ASSERT_EQ(sim.type, RedisReply::Type::kInteger) << SimDebugString(sim);
    EXPECT_LE(real.integer, sim.integer) << Describe(argv);
    EXPECT_GE(real.integer, sim.integer - slack) << Describe(argv);
  }

  // Both must give an array of the same elements, order aside: SMEMBERS,
  // which real Redis answers in its hash table's order.
  void SameMembers(const Argv& argv) {
    Reply real;
    RedisReply sim;
    if (!SendBoth(argv, &real, &sim)) return;
    ASSERT_EQ(real.type, Reply::Type::kArray) << real.DebugString();
    ASSERT_EQ(sim.type, RedisReply::Type::kArray) << SimDebugString(sim);
    std::vector<std::string> real_members, sim_members;
    for (const Reply& e : real.elements) real_members.push_back(e.str);
    for (const RedisReply& e : sim.elements) sim_members.push_back(e.str);
    std::sort(real_members.begin(), real_members.end());
    std::sort(sim_members.begin(), sim_members.end());
    EXPECT_EQ(real_members, sim_members) << Describe(argv);
  }

  void LoadScripts() {
    for (const internal::Script* script : AllScripts()) {
      Same({"SCRIPT", "LOAD", std::string(script->source)});
    }
    // The unsafe one the simulation keeps (unsafe_rules.h).
    Same({"SCRIPT", "LOAD",
          std::string(
              redlock::testing::SemaphoreCountersAcquireScript().source)});
  }

  // Sleeps on the real side and advances simulated time by as much.
  void Advance(absl::Duration d) {
    absl::SleepFor(d);
    now_ += d;
  }

  static RedisServer* server_;
  std::unique_ptr<RedisClient> real_;
  std::unique_ptr<SimRedis> sim_;
  SimRedis::Connection conn_;
  absl::Time now_;
  // Taken from the simulator, not yet looked at by ExpectPushed().
  std::vector<SimRedis::Push> pushed_;
};

RedisServer* SimRedisDifferentialTest::server_ = nullptr;

RedisReply Message(const std::string& channel, absl::string_view payload) {
  return RedisReply::Array({RedisReply::String("message"),
                            RedisReply::String(channel),
                            RedisReply::String(std::string(payload))});
}

RedisReply Subscribed(const std::string& kind, const std::string& channel,
                      int64_t count) {
  return RedisReply::Array({RedisReply::String(kind),
                            RedisReply::String(channel),
                            RedisReply::Integer(count)});
}

Argv Script(const internal::Command& command, bool eval = false) {
  return CommandArgv(command, eval);
}

TEST_F(SimRedisDifferentialTest, EngineHandshakeMatches) {
  Same({"SELECT", "3"});
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  Same({"SCRIPT", "EXISTS", AllScripts()[0]->sha1, std::string(40, 'f')});

  Reply real;
  RedisReply sim;
  ASSERT_TRUE(SendBoth({"INFO", "server"}, &real, &sim));
  ASSERT_EQ(real.type, Reply::Type::kString);
  ASSERT_EQ(sim.type, RedisReply::Type::kString);
  EXPECT_TRUE(absl::StartsWith(real.str, "# Server\r\n"));
  EXPECT_TRUE(absl::StartsWith(sim.str, "# Server\r\n"));
  const auto real_server = InfoFields(real.str);
  const auto sim_server = InfoFields(sim.str);
  for (const auto& [name, value] : sim_server) {
    EXPECT_EQ(real_server.count(name), 1u) << name << " missing from real";
  }
  for (const auto* fields : {&real_server, &sim_server}) {
    const std::string run_id =
        fields->count("run_id") ? fields->at("run_id") : "";
    EXPECT_EQ(run_id.size(), 40u);
    EXPECT_TRUE(std::all_of(run_id.begin(), run_id.end(), absl::ascii_isxdigit))
        << run_id;
    EXPECT_TRUE(AllDigits(fields->count("uptime_in_seconds")
                              ? fields->at("uptime_in_seconds")
                              : ""));
    EXPECT_EQ(fields->count("redis_mode") ? fields->at("redis_mode") : "",
              "standalone");
  }

  ASSERT_TRUE(SendBoth({"INFO", "memory"}, &real, &sim));
  ASSERT_EQ(sim.type, RedisReply::Type::kString);
  EXPECT_TRUE(absl::StartsWith(sim.str, "# Memory\r\n"));
  const auto real_memory = InfoFields(real.str);
  const auto sim_memory = InfoFields(sim.str);
  for (const char* name :
       {"maxmemory_policy", "maxmemory", "maxmemory_human"}) {
    ASSERT_EQ(real_memory.count(name), 1u) << name;
    ASSERT_EQ(sim_memory.count(name), 1u) << name;
    EXPECT_EQ(real_memory.at(name), sim_memory.at(name)) << name;
  }
  // A fresh server loaded nothing at its start.
  ASSERT_TRUE(SendBoth({"INFO", "persistence"}, &real, &sim));
  ASSERT_EQ(sim.type, RedisReply::Type::kString);
  EXPECT_TRUE(absl::StartsWith(sim.str, "# Persistence\r\n"));
  const auto real_persistence = InfoFields(real.str);
  const auto sim_persistence = InfoFields(sim.str);
  for (const auto& [name, value] : sim_persistence) {
    ASSERT_EQ(real_persistence.count(name), 1u) << name << " missing from real";
  }
  for (const char* name :
       {"rdb_last_load_keys_loaded", "rdb_last_load_keys_expired", "loading"}) {
    ASSERT_EQ(sim_persistence.count(name), 1u) << name;
    EXPECT_EQ(real_persistence.at(name), sim_persistence.at(name)) << name;
  }
  // An unknown section is an empty string, not an error.
  Same({"INFO", "nosuchsection"});

  ASSERT_TRUE(SendBoth({"TIME"}, &real, &sim));
  ASSERT_EQ(real.type, Reply::Type::kArray);
  ASSERT_EQ(sim.type, RedisReply::Type::kArray);
  ASSERT_EQ(real.elements.size(), 2u);
  ASSERT_EQ(sim.elements.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(real.elements[i].type, Reply::Type::kString);
    EXPECT_EQ(sim.elements[i].type, RedisReply::Type::kString);
    EXPECT_TRUE(AllDigits(real.elements[i].str));
    EXPECT_TRUE(AllDigits(sim.elements[i].str));
  }
  EXPECT_LT(std::stoll(sim.elements[1].str), 1000000);
  EXPECT_EQ(sim.elements[0].str, "1790000000");

  Same({"GET", "redlock-marker"});
  Same({"PING"});
  Same({"PING", "hello"});
}

TEST_F(SimRedisDifferentialTest, AcquireExtendReleaseMatch) {
  const absl::Duration ttl = absl::Seconds(10);
  Same(CommandArgv(internal::AcquireCommand("lock", "tok-a", ttl), false));
  Same(CommandArgv(internal::AcquireCommand("lock", "tok-b", ttl), false));
  Same({"GET", "lock"});
  CloseInteger({"PTTL", "lock"}, 100);
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  // Extend: wrong token refused, right one sets the new TTL.
  Same(Script(internal::ExtendCommand("lock", "tok-b", absl::Seconds(30))));
  CloseInteger({"PTTL", "lock"}, 100);
  Same(Script(internal::ExtendCommand("lock", "tok-a", absl::Seconds(30))));
  CloseInteger({"PTTL", "lock"}, 100);
  Same(Script(internal::ExtendCommand("missing", "tok-a", absl::Seconds(30))));
  // Release: wrong token leaves it, right one deletes it, once.
  Same(Script(internal::ReleaseCommand("lock", "tok-b")));
  Same({"EXISTS", "lock"});
  Same(Script(internal::ReleaseCommand("lock", "tok-a")));
  Same({"EXISTS", "lock"});
  Same(Script(internal::ReleaseCommand("lock", "tok-a")));
  Same(Script(internal::ExtendCommand("lock", "tok-a", absl::Seconds(30))));
  // A key without TTL, and a TTL overwritten by a plain SET.
  Same({"SET", "plain", "v"});
  Same({"PTTL", "plain"});
  Same({"PTTL", "missing"});
  Same({"PEXPIRE", "plain", "5000", "NX"});
  Same({"PEXPIRE", "plain", "9000", "NX"});
  Same({"PEXPIRE", "plain", "1000", "GT"});
  Same({"PEXPIRE", "plain", "1000", "LT"});
  Same({"PEXPIRE", "plain", "1000", "NX", "XX"});
  Same({"PEXPIRE", "plain", "1000", "GT", "LT"});
  Same({"PEXPIRE", "plain", "1000", "BOGUS"});
  Same({"PEXPIRE", "missing", "1000"});
  Same({"SET", "plain", "w"});
  Same({"PTTL", "plain"});
  Same({"PEXPIRE", "plain", "-1"});
  Same({"EXISTS", "plain"});
  // SET's other flags, in case a later engine sends them.
  Same({"SET", "x", "1", "XX"});
  Same({"SET", "x", "1", "NX", "GET"});
  Same({"SET", "x", "2", "NX", "GET"});
  Same({"SET", "x", "3", "XX", "GET"});
  Same({"SET", "x", "4", "EX", "100"});
  CloseInteger({"PTTL", "x"}, 100);
  Same({"SET", "x", "5", "KEEPTTL"});
  CloseInteger({"PTTL", "x"}, 100);
  Same({"DEL", "x", "x", "lock", "nothing"});
  Same({"SET", "y", "1"});
  Same({"EXISTS", "y", "y", "nothing"});
  Same({"DBSIZE"});
}

TEST_F(SimRedisDifferentialTest, BatchExtendJudgesEachLockAloneAsRedisDoes) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  const absl::Duration ttl = absl::Seconds(10);
  Same(CommandArgv(internal::AcquireCommand("a", "tok-a", ttl), false));
  Same(CommandArgv(internal::AcquireCommand("b", "tok-b", ttl), false));
  Same({"SET", "lim", "3", "PX", "5000"});
  Same(CommandArgv(internal::AcquireCommand("s0", "tok-c", ttl), false));
  const std::vector<std::string> a = {"a"}, b = {"b"}, ab = {"a", "b"},
                                 s0 = {"s0"}, gone = {"gone"};
  const std::string tok_a = "tok-a", tok_x = "tok-x", tok_c = "tok-c",
                    lim = "lim";
  auto entry = [](const std::vector<std::string>& keys,
                  const std::string& token, absl::Duration t,
                  const std::string* limit_key = nullptr, int limit = 0) {
    internal::BatchExtendEntry e;
    e.keys = keys;
    e.token = token;
    e.ttl = t;
    e.limit_key = limit_key;
    e.limit = limit;
    return e;
  };
  const std::vector<internal::BatchExtendEntry> entries = {
      entry(a, tok_a, absl::Seconds(30)),            // 1
      entry(b, tok_x, absl::Seconds(30)),            // 0: not ours
      entry(ab, tok_a, absl::Seconds(40)),           // 0: b is not tok-a
      entry(s0, tok_c, absl::Seconds(20), &lim, 3),  // 1
      entry(s0, tok_c, absl::Seconds(50), &lim, 4),  // -1: other limit
      entry(gone, tok_a, absl::Seconds(30)),         // 0: never resurrected
  };
  Same(Script(internal::BatchExtendCommand(entries)));
  CloseInteger({"PTTL", "a"}, 100);
  CloseInteger({"PTTL", "b"}, 100);
  CloseInteger({"PTTL", "s0"}, 100);
  CloseInteger({"PTTL", "lim"}, 100);
  Same({"GET", "lim"});
  Same({"EXISTS", "gone"});
}

TEST_F(SimRedisDifferentialTest, MultiResourceScriptsMatch) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  const absl::Duration ttl = absl::Seconds(10);
  const std::vector<std::string> ab = {"a", "b"};
  const std::vector<std::string> bc = {"b", "c"};
  const std::vector<std::string> fab = {"fence:a", "fence:b"};
  // All or none: b taken, so b and c are not set.
  Same(Script(internal::AcquireCommand(ab, "tok-1", ttl)));
  CloseInteger({"PTTL", "a"}, 100);
  Same(Script(internal::AcquireCommand(bc, "tok-2", ttl)));
  Same({"EXISTS", "c"});
  // Extend all or none: a set that lost a key is not extended.
  Same(Script(internal::ExtendCommand(ab, "tok-1", absl::Seconds(30))));
  CloseInteger({"PTTL", "b"}, 100);
  Same({"DEL", "b"});
  Same(Script(internal::ExtendCommand(ab, "tok-1", absl::Seconds(60))));
  CloseInteger({"PTTL", "a"}, 100);
  // Release deletes what still holds the token, says whether it deleted any.
  Same({"SET", "b", "someone-else"});
  Same(Script(internal::ReleaseCommand(ab, "tok-1")));
  Same({"EXISTS", "a", "b"});
  Same(Script(internal::ReleaseCommand(ab, "tok-1")));
  Same({"DEL", "b"});
  // Fenced, several resources: one counter each, the marker last.
  Same({"SET", "fence:b", "7"});
  Same({"SET", "marker", "trusted:1"});
  // Only the second resource held: nothing is set.
  Same({"SET", "b", "someone-else"});
  Same(Script(internal::FencedAcquireCommand(ab, fab, "marker", "tok-3", ttl)));
  Same({"EXISTS", "a"});
  Same({"DEL", "b"});
  Same(Script(internal::FencedAcquireCommand(ab, fab, "marker", "tok-3", ttl)));
  Same(Script(internal::FencedAcquireCommand(ab, fab, "marker", "tok-4", ttl)));
  // The write-back raises every counter or none.
  Same(Script(internal::FenceWriteCommand(fab, 7)));
  Same(Script(internal::FenceWriteCommand(fab, 8)));
  Same({"GET", "fence:a"});
  Same({"GET", "fence:b"});
  Same(Script(internal::FenceWriteCommand(fab, 8)));
}

TEST_F(SimRedisDifferentialTest, FencingScriptsMatch) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  const absl::Duration ttl = absl::Seconds(10);
  Same(Script(
      internal::FencedAcquireCommand("lock", "fence", "marker", "tok-a", ttl)));
  CloseInteger({"PTTL", "lock"}, 100);
  // The write-back only raises the counter: equal and lower are refused.
  Same(Script(internal::FenceWriteCommand("fence", 5)));
  Same(Script(internal::FenceWriteCommand("fence", 5)));
  Same(Script(internal::FenceWriteCommand("fence", 3)));
  Same(Script(internal::FenceWriteCommand("fence", 12)));
  Same({"GET", "fence"});
  Same({"PTTL", "fence"});
  // Held: not set, but the counter is read in the same step.
  Same(Script(
      internal::FencedAcquireCommand("lock", "fence", "marker", "tok-b", ttl)));
  Same({"GET", "lock"});
  // A counter Lua cannot read as a number counts as 0.
  Same({"SET", "odd", "not-a-number"});
  Same(Script(internal::FenceWriteCommand("odd", 1)));
  Same({"GET", "odd"});

  // The resource side: equal accepted, lower and non-numeric refused.
  Same(FencedSetArgv("rfence", "data", 7, "v7"));
  Same(FencedSetArgv("rfence", "data", 7, "v7-again"));
  Same(FencedSetArgv("rfence", "data", 6, "v6"));
  Same({"GET", "data"});
  Same({"GET", "rfence"});
  Argv bad_token = FencedSetArgv("rfence", "data", 9, "v9");
  bad_token[5] = "nine";
  Same(bad_token);
  Same(FencedSetArgv("rfence", "data", 9, "v9"));
  Same({"GET", "data"});
}

TEST_F(SimRedisDifferentialTest, MarkerIsWrittenOnceFromTheMasterClock) {
  const Argv marker = Script(
      internal::MarkerCommand("marker", "up", "0123abcd", absl::Seconds(90)),
      true);
  Reply real1, real2;
  RedisReply sim1, sim2;
  ASSERT_TRUE(SendBoth(marker, &real1, &sim1));
  ASSERT_TRUE(SendBoth(marker, &real2, &sim2));
  for (const Reply* r : {&real1, &real2}) {
    ASSERT_EQ(r->type, Reply::Type::kString) << r->DebugString();
  }
  for (const RedisReply* r : {&sim1, &sim2}) {
    ASSERT_EQ(r->type, RedisReply::Type::kString) << SimDebugString(*r);
  }
  // "up:", seconds and six digits of microseconds, then ":" and the run_id
  // sent as ARGV[2], ":" and the max_ttl in ms as ARGV[3].
  for (const std::string* value : {&real1.str, &sim1.str}) {
    ASSERT_TRUE(absl::StartsWith(*value, "up:")) << *value;
    EXPECT_TRUE(AllDigits(value->substr(3, 16))) << *value;
    EXPECT_EQ(value->substr(3 + 16), ":0123abcd:90000") << *value;
  }
  EXPECT_EQ(sim1.str, "up:1790000000000000:0123abcd:90000");
  EXPECT_EQ(real2.str, real1.str);
  EXPECT_EQ(sim2.str, sim1.str);
  // The marker script does not give the key a TTL.
  Same({"PTTL", "marker"});
}

// Replies that carry a server TIME stamp (16 digits of microseconds) are
// compared with the stamp replaced: any 16-digit run in the real server's
// reply, exactly the simulator's master clock (1790000000000000) in its.
std::string Unstamped(absl::string_view s, bool sim) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && absl::ascii_isdigit(s[j])) ++j;
    if (j == i) {
      out += s[i++];
      continue;
    }
    const absl::string_view digits = s.substr(i, j - i);
    absl::StrAppend(&out,
                    (sim ? digits == "1790000000000000" : digits.size() == 16)
                        ? absl::string_view("<TIME>")
                        : digits);
    i = j;
  }
  return out;
}

bool SameUnstamped(const Reply& real, const RedisReply& sim) {
  if (!SameType(real, sim)) return false;
  switch (sim.type) {
    case RedisReply::Type::kString:
      return Unstamped(real.str, false) == Unstamped(sim.str, true);
    case RedisReply::Type::kArray:
      if (real.elements.size() != sim.elements.size()) return false;
      for (size_t i = 0; i < sim.elements.size(); ++i) {
        if (!SameUnstamped(real.elements[i], sim.elements[i])) return false;
      }
      return true;
    default:
      return SameReply(real, sim);
  }
}

TEST_F(SimRedisDifferentialTest, MembershipRecordsAreWrittenAsTheScriptsSay) {
  internal::Membership steady;
  steady.deployment = "0123456789abcdef";
  steady.epoch = 1;
  steady.members = {"h:1", "h:2", "h:3"};
  internal::Membership joint = steady;
  joint.epoch = 2;
  joint.next = {"h:1", "h:2", "h:4"};
  const std::string steady_text = internal::RecordText(steady);
  const std::string joint_text = internal::RecordText(joint);
  auto marker = [](const std::string& key, const std::string& suffix) {
    return Script(internal::MarkerCommand(key, "trusted", "run0",
                                          absl::Seconds(90), suffix),
                  true);
  };
  auto reconfigure = [](const std::string& key, const std::string& expected,
                        const std::string& suffix) {
    return Script(internal::ReconfigureCommand(key, expected, suffix, "trusted",
                                               "run9", absl::Seconds(30)),
                  true);
  };
  std::vector<std::string> sim_values;
  auto same = [&](const Argv& argv) {
    Reply real;
    RedisReply sim;
    if (!SendBoth(argv, &real, &sim)) return;
    EXPECT_TRUE(SameUnstamped(real, sim))
        << Describe(argv) << "\n  real: " << real.DebugString()
        << "\n  sim:  " << SimDebugString(sim);
    sim_values.push_back(SimDebugString(sim));
  };
  // MarkerCommand with a record: written with the marker, then kept.
  same(marker("m1", internal::MarkerSuffix("h:1", steady)));
  same(marker("m1", internal::MarkerSuffix("h:1", joint)));
  same({"GET", "m1"});
  // A legacy marker gets the record appended once; a marker with a record
  // (or an empty suffix) is left as it is.
  same({"SET", "legacy", "trusted:5:run0:90000"});
  same(marker("legacy", ""));
  same(marker("legacy", internal::MarkerSuffix("h:2", steady)));
  same(marker("legacy", internal::MarkerSuffix("h:2", joint)));
  same({"GET", "legacy"});
  // ReconfigureCommand: another expected record, another member name: no.
  same(reconfigure("m1", joint_text, internal::MarkerSuffix("h:1", joint)));
  same(reconfigure("m1", "", internal::MarkerSuffix("h:1", joint)));
  same(reconfigure("m1", steady_text, internal::MarkerSuffix("h:9", joint)));
  same({"GET", "m1"});
  // The expected record: written, the marker's own part kept; once only.
  same(reconfigure("m1", steady_text, internal::MarkerSuffix("h:1", joint)));
  same(reconfigure("m1", steady_text, internal::MarkerSuffix("h:1", joint)));
  same({"GET", "m1"});
  // No marker at all: created only if "" was expected.
  same(reconfigure("m4", steady_text, internal::MarkerSuffix("h:4", joint)));
  same({"EXISTS", "m4"});
  same(reconfigure("m4", "", internal::MarkerSuffix("h:4", joint)));
  same({"GET", "m4"});
  // A legacy marker holds the record "": the member check does not apply.
  same({"SET", "old", "trusted:5:run0"});
  same(reconfigure("old", steady_text, internal::MarkerSuffix("h:2", joint)));
  same(reconfigure("old", "", internal::MarkerSuffix("h:2", joint)));
  same({"GET", "old"});
  // A record without ";member=" is refused; one without ";since=" runs to
  // the end; with two ";since=" the record runs to the last (Lua's greedy
  // ".*").
  same({"SET", "nomember", "trusted:5:r;" + steady_text});
  same(reconfigure("nomember", steady_text,
                   internal::MarkerSuffix("h:1", joint)));
  same({"SET", "nosince", "trusted:5:r;member=h:1;" + steady_text});
  same(reconfigure("nosince", steady_text,
                   internal::MarkerSuffix("h:1", joint)));
  same({"SET", "twice",
        "trusted:5:r;member=h:1;" + steady_text + ";since=1;x=y;since=2"});
  same(reconfigure("twice", steady_text, internal::MarkerSuffix("h:1", joint)));
  same(reconfigure("twice", steady_text + ";since=1;x=y",
                   internal::MarkerSuffix("h:1", joint)));
  same({"GET", "twice"});
  same({"PTTL", "m1"});
  // The simulator's replies, as the scripts define them.
  ASSERT_GE(sim_values.size(), 14u);
  const std::string stamp = "1790000000000000";
  EXPECT_EQ(sim_values[0],
            absl::StrCat("\"trusted:", stamp, ":run0:90000;member=h:1;",
                         steady_text, ";since=", stamp, "\""));
  EXPECT_EQ(sim_values[1], sim_values[0]);
  EXPECT_EQ(sim_values[12], absl::StrCat("[(integer) 1, \"trusted:", stamp,
                                         ":run0:90000;member=h:1;", joint_text,
                                         ";since=", stamp, "\"]"));
  EXPECT_EQ(
      sim_values[13],
      "[(integer) 0, " + sim_values[12].substr(sizeof("[(integer) 1, ") - 1));
}

TEST_F(SimRedisDifferentialTest, NoscriptAfterFlushThenEvalCaches) {
  const internal::Command release = internal::ReleaseCommand("lock", "tok");
  Same({"SET", "lock", "tok", "NX", "PX", "10000"});
  Same(Script(release));  // Never loaded.
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  Same({"SCRIPT", "FLUSH"});
  Same(Script(release));
  Same({"SCRIPT", "EXISTS", release.script->sha1});
  Same(Script(release, /*eval=*/true));
  Same({"SCRIPT", "EXISTS", release.script->sha1});
  Same({"SET", "lock", "tok", "NX", "PX", "10000"});
  Same(Script(release));
  Same({"SCRIPT", "FLUSH", "ASYNC"});
  Same({"SCRIPT", "FLUSH", "SOMETIMES"});
  Same({"EVALSHA", "abc", "0"});
  Same({"EVALSHA", std::string(40, 'f'), "0"});
}

TEST_F(SimRedisDifferentialTest, KeyExpiresAfterItsTtl) {
  Same({"SET", "short", "v", "PX", "100"});
  Same({"GET", "short"});
  CloseInteger({"PTTL", "short"}, 50);
  Advance(absl::Milliseconds(150));
  Same({"GET", "short"});
  Same({"PTTL", "short"});
  Same({"EXISTS", "short"});
  // Expired means gone for NX too.
  Same({"SET", "short", "w", "NX", "PX", "100"});
  Same({"GET", "short"});
}

TEST_F(SimRedisDifferentialTest, DatabasesAreSeparate) {
  Same({"SET", "k", "zero"});
  Same({"SELECT", "1"});
  Same({"GET", "k"});
  Same({"SET", "k", "one"});
  Same({"SELECT", "0"});
  Same({"GET", "k"});
  Same({"SELECT", "15"});
  Same({"SELECT", "16"});
  Same({"SELECT", "-1"});
  Same({"SELECT", "abc"});
  Same({"GET", "k"});
}

TEST_F(SimRedisDifferentialTest, ErrorsMatchWordForWord) {
  Same({"NOSUCHCOMMAND"});
  Same({"nosuch", "a", "b"});
  Same({"GET"});
  Same({"GET", "a", "b"});
  Same({"SET", "k"});
  Same({"SET", "k", "v", "PX"});
  Same({"SET", "k", "v", "PX", "0"});
  Same({"SET", "k", "v", "PX", "-5"});
  Same({"SET", "k", "v", "PX", "abc"});
  Same({"SET", "k", "v", "PX", "01"});
  Same({"SET", "k", "v", "EX", "0"});
  Same({"SET", "k", "v", "PX", "10", "EX", "10"});
  Same({"SET", "k", "v", "NX", "XX"});
  Same({"SET", "k", "v", "KEEPTTL", "PX", "10"});
  Same({"SET", "k", "v", "BOGUS"});
  Same({"SET", "k", "v", "PX", "9223372036854775807"});
  Same({"DEL"});
  Same({"EXISTS"});
  Same({"PTTL"});
  Same({"PEXPIRE", "k"});
  Same({"PEXPIRE", "k", "soon"});
  Same({"TIME", "now"});
  Same({"PING", "a", "b"});
  Same({"AUTH", "secret"});
  Same({"AUTH", "someone", "secret"});
  Same({"AUTH", "default", "anything"});
  Same({"AUTH", "a", "b", "c"});
  Same({"SCRIPT"});
  Same({"SCRIPT", "LOAD"});
  Same({"SCRIPT", "FOO"});
  Same({"EVAL", "return 1"});
  Same({"EVAL", "return 1", "x"});
  Same({"EVAL", "return 1", "2", "a"});
  Same({"EVAL", "return 1", "-1"});
  Same({"EVALSHA", std::string(40, 'a'), "zz"});
  // Errors raised by redis.call() inside the engine's scripts.
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  Same({"SET", "lock", "tok"});
  Argv extend =
      Script(internal::ExtendCommand("lock", "tok", absl::Seconds(1)));
  extend.back() = "soon";
  Same(extend);
  Argv acquire = Script(internal::FencedAcquireCommand(
      "other", "fence", "marker", "tok", absl::Seconds(1)));
  acquire.back() = "0";
  Same(acquire);
  Argv fence = Script(internal::FenceWriteCommand("fence", 1));
  fence.back() = "many";
  Same(fence);
}

// Channels are named per test: the server is shared, and a previous test's
// subscriber may not be gone yet when the next one publishes.

TEST_F(SimRedisDifferentialTest, SubscribeAndUnsubscribeReplyWithTheCount) {
  Same({"UNSUBSCRIBE"});
  Same({"UNSUBSCRIBE", "counts:x"});
  Same({"SUBSCRIBE", "counts:a"});
  Same({"SUBSCRIBE", "counts:a"});
  Same({"SUBSCRIBE", "counts:b"});
  Same({"PING"});
  Same({"PING", "hello"});
  Same({"PING", "a", "b"});
  Same({"SUBSCRIBE"});
  Same({"UNSUBSCRIBE", "counts:never"});
  Same({"UNSUBSCRIBE", "counts:a"});
  Same({"UNSUBSCRIBE", "counts:b"});
  // Subscribed to nothing: an ordinary connection again.
  Same({"GET", "k"});
  Same({"PING"});
  Same({"SUBSCRIBE", "counts:c"});
  Same({"UNSUBSCRIBE"});
  Same({"UNSUBSCRIBE"});
  Same({"SET", "k", "v"});
}

TEST_F(SimRedisDifferentialTest, SeveralChannelsGetOneReplyEach) {
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  SameOn(*sub, {"SUBSCRIBE", "several:a", "several:b", "several:a"});
  ExpectPushed(*sub, {Subscribed("subscribe", "several:b", 2),
                      Subscribed("subscribe", "several:a", 2)});
  SameOn(*sub, {"UNSUBSCRIBE", "several:b", "several:a"});
  ExpectPushed(*sub, {Subscribed("unsubscribe", "several:a", 0)});
}

TEST_F(SimRedisDifferentialTest, SubscribedConnectionRefusesOtherCommands) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  Same({"SUBSCRIBE", "refuses:a"});
  Same({"GET", "k"});
  Same({"set", "k", "v"});
  Same({"SELECT", "1"});
  Same({"PUBLISH", "refuses:a", "x"});
  Same({"AUTH", "secret"});
  Same({"INFO", "server"});
  Same({"SCRIPT", "LOAD", "return 1"});
  Same({"CONFIG", "GET", "appendonly"});
  Same(Script(internal::ReleaseCommand("lock", "tok")));
  // Unknown commands and arity are judged first.
  Same({"NOSUCH", "x"});
  Same({"GET"});
  Same({"UNSUBSCRIBE", "refuses:a"});
  Same({"GET", "k"});
}

TEST_F(SimRedisDifferentialTest, PublishReachesSubscribersInEveryDatabase) {
  std::unique_ptr<Peer> in_db3 = NewPeer();
  std::unique_ptr<Peer> in_db0 = NewPeer();
  ASSERT_TRUE(in_db3 != nullptr && in_db0 != nullptr);
  SameOn(*in_db3, {"SELECT", "3"});
  SameOn(*in_db3, {"SUBSCRIBE", "everywhere:lock"});
  SameOn(*in_db0, {"SUBSCRIBE", "everywhere:lock"});
  SameOn(*in_db0, {"SUBSCRIBE", "everywhere:other"});
  Same({"SELECT", "5"});
  Same({"PUBLISH", "everywhere:lock", "hello"});
  Same({"PUBLISH", "everywhere:other", "there"});
  Same({"PUBLISH", "everywhere:nobody", "lost"});
  ExpectPushed(*in_db3, {Message("everywhere:lock", "hello")});
  ExpectPushed(*in_db0, {Message("everywhere:lock", "hello"),
                         Message("everywhere:other", "there")});
  SameOn(*in_db0, {"UNSUBSCRIBE", "everywhere:lock"});
  Same({"PUBLISH", "everywhere:lock", "again"});
  ExpectPushed(*in_db0, {});
  ExpectPushed(*in_db3, {Message("everywhere:lock", "again")});
}

TEST_F(SimRedisDifferentialTest, ReleasePublishesReleasedForEachKeyItDeletes) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  const std::vector<std::string> keys = {"released:a", "released:b",
                                         "released:c"};
  for (const std::string& key : keys) SameOn(*sub, {"SUBSCRIBE", key});
  ExpectPushed(*sub, {});
  Same({"SET", "released:a", "tok", "PX", "10000"});
  Same({"SET", "released:b", "someone-else", "PX", "10000"});
  // A wrong token deletes nothing and publishes nothing.
  Same(Script(internal::ReleaseCommand(keys, "wrong")));
  ExpectPushed(*sub, {});
  // Only the key it held: b belongs to someone else, c does not exist.
  Same(Script(internal::ReleaseCommand(keys, "tok")));
  ExpectPushed(*sub, {Message("released:a", kReleasedMessage)});
  Same(Script(internal::ReleaseCommand(keys, "tok")));
  ExpectPushed(*sub, {});
  // One key, by EVAL, from another database: channels are server-wide.
  Same({"SELECT", "2"});
  Same({"SET", "released:c", "tok", "PX", "10000"});
  Same(Script(internal::ReleaseCommand("released:c", "tok"), /*eval=*/true));
  ExpectPushed(*sub, {Message("released:c", kReleasedMessage)});
  // A lost attempt's cleanup deletes quietly.
  Same({"SET", "released:c", "tok", "PX", "10000"});
  Same(Script(
      internal::ReleaseCommand("released:c", "tok", /*announce=*/false)));
  ExpectPushed(*sub, {});
  Same({"EXISTS", "released:c"});
}

TEST_F(SimRedisDifferentialTest,
       ReleaseNamesTheEarliestQueuedWaiterAsRedisDoes) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  SameOn(*sub, {"SUBSCRIBE", "q:lock"});
  ExpectPushed(*sub, {});
  // bb came first; cc's arrival is no number, dd has none (gone).
  Same({"SADD", "q:wait", "aa", "bb", "cc", "dd"});
  Same({"SET", "q:arr:aa", "1700000000000200", "PX", "10000"});
  Same({"SET", "q:arr:bb", "1700000000000100", "PX", "10000"});
  Same({"SET", "q:arr:cc", "soon", "PX", "10000"});
  Same({"SET", "q:lock", "tok", "PX", "10000"});
  Same(Script(internal::ReleaseCommand("q:lock", "tok", "q:wait", "q:arr:")));
  ExpectPushed(*sub, {Message("q:lock", "released bb")});
  // Nobody with an arrival key: no name.
  Same({"SET", "q:lock", "tok", "PX", "10000"});
  Same(Script(internal::ReleaseCommand("q:lock", "tok", "q:none", "q:arr:")));
  ExpectPushed(*sub, {Message("q:lock", kReleasedMessage)});
  // A waiting key of another type names nobody and fails nothing.
  Same({"SET", "q:string", "x"});
  Same({"SET", "q:lock", "tok", "PX", "10000"});
  Same(Script(internal::ReleaseCommand("q:lock", "tok", "q:string", "q:arr:")));
  ExpectPushed(*sub, {Message("q:lock", kReleasedMessage)});
  Same({"EXISTS", "q:lock"});
  // A refused writer stamps its arrival once and keeps it; a win deletes it.
  Same({"SET", "q:lock", "other", "PX", "10000"});
  const internal::Command refused = internal::WriterAcquireCommand(
      "q:lock", "q:wait", "tok-e", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/true, "q:arr:ee");
  Same(Script(refused));
  Same({"EXISTS", "q:arr:ee"});
  Same({"SCARD", "q:wait"});
  Same({"SET", "q:arr:ee", "1", "KEEPTTL"});
  Same(Script(refused));
  Same({"GET", "q:arr:ee"});
  Same({"DEL", "q:lock"});
  Same(Script(refused));
  ExpectPushed(*sub, {Message("q:lock", kTakenMessage)});
  Same({"EXISTS", "q:arr:ee"});
  Same({"SCARD", "q:wait"});
}

// The hand-off scripts' keys: the lock, its waiting set, and the arrival
// keys' and hand-off entries' prefixes (each followed by a waiter id).
constexpr char kHoLock[] = "ho:lock";
constexpr char kHoWait[] = "ho:wait";
constexpr char kHoArr[] = "ho:arr:";
constexpr char kHoEntry[] = "ho:entry:";

// The hand-off scripts, each step on both servers: scripts loaded, and a
// subscriber on the lock's channel on each.
class SimRedisHandOffTest : public SimRedisDifferentialTest {
 protected:
  void SetUp() override {
    SimRedisDifferentialTest::SetUp();
    LoadScripts();
    sub_ = NewPeer();
    ASSERT_NE(sub_, nullptr);
    SameOn(*sub_, {"SUBSCRIBE", kHoLock});
    // A hand-off is published on the heir's own channel (its entry's
    // name), not the lock's: the heirs of these tests' hand-offs.
    for (const char* heir : {"aa", "bb", "ic"}) {
      SameOn(*sub_, {"SUBSCRIBE", entry_ + heir});
    }
    ExpectPushed(*sub_, {});
  }

  // A lock's release that hands over (ReleaseCommand with the prefixes).
  static Argv Release(const char* token) {
    return Script(
        internal::ReleaseCommand(kHoLock, token, kHoWait, kHoArr, kHoEntry));
  }

  std::unique_ptr<Peer> sub_;
  const std::string arr_ = kHoArr;
  const std::string entry_ = kHoEntry;
};

TEST_F(SimRedisHandOffTest,
       ReleaseHandsTheKeyToTheLongestQueuedWaiterWithAHandOffEntry) {
  // cc came first but left no entry; bb came before aa.
  Same({"SADD", kHoWait, "aa", "bb", "cc"});
  Same({"SET", arr_ + "aa", "1700000000000300", "PX", "10000"});
  Same({"SET", arr_ + "bb", "1700000000000200", "PX", "10000"});
  Same({"SET", arr_ + "cc", "1700000000000100", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 7000 a0a0", "PX", "10000"});
  Same({"SET", entry_ + "bb", "beef 5000 b0b0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(entry_ + "bb", "granted beef")});
  // The key is bb's token with bb's TTL; bb left the queue.
  Same({"GET", kHoLock});
  CloseInteger({"PTTL", kHoLock}, 100);
  SameMembers({"SMEMBERS", kHoWait});
  Same({"EXISTS", arr_ + "bb", entry_ + "bb"});
  Same({"EXISTS", arr_ + "aa", entry_ + "aa", arr_ + "cc"});
  // bb's release hands it to aa, aa's (no entry left) names cc.
  Same(Release("b0b0"));
  ExpectPushed(*sub_, {Message(entry_ + "aa", "granted cafe")});
  Same({"GET", kHoLock});
  CloseInteger({"PTTL", kHoLock}, 100);
  Same(Release("a0a0"));
  ExpectPushed(*sub_, {Message(kHoLock, "released cc")});
  Same({"EXISTS", kHoLock});
  SameMembers({"SMEMBERS", kHoWait});
  // Without the entries' prefix, the old release: an entry is not read.
  Same({"SADD", kHoWait, "dd"});
  Same({"SET", arr_ + "dd", "1700000000000050", "PX", "10000"});
  Same({"SET", entry_ + "dd", "d00d 5000 d0d0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Script(internal::ReleaseCommand(kHoLock, "f00d", kHoWait, kHoArr)));
  ExpectPushed(*sub_, {Message(kHoLock, "released dd")});
  Same({"EXISTS", kHoLock, entry_ + "dd"});
  // Nor does an unannounced release hand anything on.
  Argv quiet = Release("f00d");
  quiet[5] = "0";  // ARGV[2]: not announced.
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(quiet);
  ExpectPushed(*sub_, {});
  Same({"EXISTS", kHoLock, entry_ + "dd"});
}

TEST_F(SimRedisHandOffTest,
       ReleaseNeverHandsTheKeyToAnEntryOfTheReleasingToken) {
  // aa's entry is for the token being released: it is named, not handed
  // the key; its entry and place stay.
  Same({"SADD", kHoWait, "aa"});
  Same({"SET", arr_ + "aa", "1700000000000100", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 7000 f00d", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(kHoLock, "released aa")});
  Same({"EXISTS", kHoLock});
  Same({"EXISTS", arr_ + "aa", entry_ + "aa"});
  SameMembers({"SMEMBERS", kHoWait});
  // bb, queued later with an entry for another token, is the heir.
  Same({"SADD", kHoWait, "bb"});
  Same({"SET", arr_ + "bb", "1700000000000200", "PX", "10000"});
  Same({"SET", entry_ + "bb", "beef 5000 b0b0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(entry_ + "bb", "granted beef")});
  Same({"GET", kHoLock});
  SameMembers({"SMEMBERS", kHoWait});
  Same({"EXISTS", arr_ + "aa", entry_ + "aa"});
}

TEST_F(SimRedisHandOffTest, ReleaseSkipsMalformedHandOffEntries) {
  // Each of these waiters' entries fails '^(%x+) (%d+) (%x+)$' or a TTL
  // above 0; i2 has a good entry but no arrival number; i9 is a set.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"i0", "cafz 5000 a0a0"},  {"i1", "cafe 0 a0a0"},
      {"i3", "cafe 000 a0a0"},   {"i4", "cafe 5000 a0a0 "},
      {"i5", "cafe  5000 a0a0"}, {"i6", "cafe 5e3 a0a0"},
      {"i7", "cafe 5000"},       {"i8", " cafe 5000 a0a0"},
      {"ia", "cafe -5 a0a0"},    {"ib", "0x1 5000 a0a0"},
  };
  int64_t at = 1700000000000100;
  for (const auto& [id, value] : bad) {
    Same({"SADD", kHoWait, id});
    Same({"SET", arr_ + id, absl::StrCat(at++), "PX", "10000"});
    Same({"SET", entry_ + id, value, "PX", "10000"});
  }
  Same({"SADD", kHoWait, "i2", "i9"});
  Same({"SET", entry_ + "i2", "cafe 5000 a0a0", "PX", "10000"});
  Same({"SET", arr_ + "i9", "1700000000000000", "PX", "10000"});
  Same({"SADD", entry_ + "i9", "x"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  // Nobody is the heir: the earliest, i9 (its entry unreadable), is named.
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(kHoLock, "released i9")});
  Same({"EXISTS", kHoLock});
  Same({"SCARD", kHoWait});
  // Upper-case hex is hex: ic, queued last, is the heir.
  Same({"SADD", kHoWait, "ic"});
  Same({"SET", arr_ + "ic", absl::StrCat(at++), "PX", "10000"});
  Same({"SET", entry_ + "ic", "CAFE 5000 A0B0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(entry_ + "ic", "granted CAFE")});
  Same({"GET", kHoLock});
  Same({"SCARD", kHoWait});
}

TEST_F(SimRedisHandOffTest, WithdrawalComesBeforeTheHandOff) {
  auto withdraw = [&](const char* token, const char* id, bool leave) {
    return Script(internal::WithdrawCommand(kHoLock, token, kHoWait, kHoArr,
                                            kHoEntry, id, leave));
  };
  Same({"SADD", kHoWait, "aa", "bb"});
  Same({"SET", arr_ + "aa", "1700000000000100", "PX", "10000"});
  Same({"SET", arr_ + "bb", "1700000000000200", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 7000 a0a0", "PX", "10000"});
  Same({"SET", entry_ + "bb", "beef 5000 b0b0", "PX", "10000"});
  // A release had handed the key to aa, whose attempt was lost: aa drops
  // its entry but keeps its place, and the key goes on to bb, not back to
  // aa, although aa is queued longer.
  Same({"SET", kHoLock, "a0a0", "PX", "7000"});
  Same(withdraw("a0a0", "aa", /*leave=*/false));
  ExpectPushed(*sub_, {Message(entry_ + "bb", "granted beef")});
  Same({"GET", kHoLock});
  SameMembers({"SMEMBERS", kHoWait});
  Same({"EXISTS", arr_ + "aa"});
  Same({"EXISTS", entry_ + "aa", arr_ + "bb", entry_ + "bb"});
  // aa, still queued, refreshes its entry; then gives up: it leaves the
  // queue while bb holds the key, which stays bb's.
  Same({"SET", entry_ + "aa", "cafe 7000 a0a0", "PX", "10000"});
  Same(withdraw("a0a0", "aa", /*leave=*/true));
  ExpectPushed(*sub_, {});
  Same({"GET", kHoLock});
  Same({"EXISTS", kHoWait, arr_ + "aa", entry_ + "aa"});
  // A withdrawal of a waiter that is not queued changes nothing else; bb's
  // release then finds nobody to hand to or name.
  Same(withdraw("b0b0", "zz", /*leave=*/true));
  ExpectPushed(*sub_, {Message(kHoLock, kReleasedMessage)});
  Same({"EXISTS", kHoLock});
  // A lost attempt's give-back (place kept) with nobody to hand to deletes
  // the key quietly: no "released" to wake the waiters against the holder.
  Same({"SET", kHoLock, "c0c0", "PX", "7000"});
  Same(withdraw("c0c0", "cc", /*leave=*/false));
  ExpectPushed(*sub_, {});
  Same({"EXISTS", kHoLock});
}

TEST_F(SimRedisHandOffTest,
       WriterAcquireWithAHandOffEntryWritesItOnRefusalAndWinsOnItsToken) {
  const internal::HandOffEntry hand_off{entry_ + "ee", "cafe",
                                        absl::Seconds(3)};
  const internal::Command acquire = internal::WriterAcquireCommand(
      kHoLock, kHoWait, "e0e0", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/true, arr_ + "ee", &hand_off);
  // Refused: queued, and the entry "<proof> <ttl> <token>" with PX its TTL.
  Same({"SET", kHoLock, "f00d", "PX", "20000"});
  Same(Script(acquire));
  Same({"GET", entry_ + "ee"});
  CloseInteger({"PTTL", entry_ + "ee"}, 100);
  Same({"SCARD", kHoWait});
  Same({"EXISTS", arr_ + "ee"});
  // The key already holds the token (a release handed it over): a win, the
  // TTL set again, the entry, arrival key and id gone.
  Same({"SET", kHoLock, "e0e0", "PX", "1000"});
  Same(Script(acquire));
  ExpectPushed(*sub_, {Message(kHoLock, kTakenMessage)});
  CloseInteger({"PTTL", kHoLock}, 100);
  Same({"EXISTS", kHoWait, arr_ + "ee", entry_ + "ee"});
  // Without KEYS[4], the key holding the same token is a refusal still.
  const internal::Command plain = internal::WriterAcquireCommand(
      kHoLock, kHoWait, "e0e0", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/true, arr_ + "ee");
  Same({"SET", kHoLock, "e0e0", "PX", "5000"});
  Same(Script(plain));
  ExpectPushed(*sub_, {});
  CloseInteger({"PTTL", kHoLock}, 100);
  Same({"SCARD", kHoWait});
  Same({"EXISTS", entry_ + "ee"});
  // ARGV[2] goes into the entry as sent.
  Same({"SET", kHoLock, "f00d", "PX", "20000"});
  Argv odd = Script(acquire);
  ASSERT_EQ(odd.size(), 3u + 4u + 7u);
  odd[8] = "010000";
  Same(odd);
  Same({"GET", entry_ + "ee"});
}

TEST_F(SimRedisHandOffTest,
       HandOffScriptCallErrorsStopTheScriptWhereRedisDoes) {
  // A hand-off entry whose TTL tonumber() takes but SET's PX refuses: the
  // release fails at its SET (line 32), the key already deleted.
  Same({"SADD", kHoWait, "aa"});
  Same({"SET", arr_ + "aa", "1700000000000100", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 0012 a0a0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  Same({"EXISTS", kHoLock});
  Same({"SCARD", kHoWait});
  // A waiting key of another type: a withdrawal that leaves the queue fails
  // at its SREM (line 23), the entry already deleted.
  Same({"DEL", kHoWait});
  Same({"SET", kHoWait, "not-a-set"});
  Same(Script(internal::WithdrawCommand(kHoLock, "f00d", kHoWait, kHoArr,
                                        kHoEntry, "aa", /*leave_queue=*/true)));
  Same({"EXISTS", entry_ + "aa", arr_ + "aa"});
  // ... and the writer acquire's SADD (line 10) on a refusal.
  const internal::HandOffEntry hand_off{entry_ + "ee", "cafe",
                                        absl::Seconds(3)};
  const internal::Command acquire = internal::WriterAcquireCommand(
      kHoLock, kHoWait, "e0e0", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/false, arr_ + "ee", &hand_off);
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Script(acquire));
  // The lock key a set: the writer acquire's GET (line 1) with KEYS[4].
  Same({"DEL", kHoLock, kHoWait});
  Same({"SADD", kHoLock, "x"});
  Same(Script(acquire));
  // An entry TTL SET refuses: the refusal fails at the entry (line 19),
  // queued already.
  Same({"DEL", kHoLock});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Argv bad_ttl = Script(acquire);
  bad_ttl.back() = "0";
  Same(bad_ttl);
  Same({"SCARD", kHoWait});
  Same({"EXISTS", arr_ + "ee", entry_ + "ee"});
  // A waiting TTL that is no number: math.max (line 11), queued already.
  Argv bad_wait = Script(acquire);
  bad_wait[10] = "x";
  Same(bad_wait);
  // A TTL SET refuses on a win (line 3).
  Same({"DEL", kHoLock});
  Argv bad_win = Script(acquire);
  bad_win[8] = "soon";
  Same(bad_win);
  Same({"EXISTS", kHoLock});
}

TEST_F(SimRedisDifferentialTest, MultiAcquirePublishesTakenOnlyWhenItSets) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  const std::vector<std::string> ab = {"taken:a", "taken:b"};
  const std::vector<std::string> bc = {"taken:b", "taken:c"};
  for (const char* key : {"taken:a", "taken:b", "taken:c"}) {
    SameOn(*sub, {"SUBSCRIBE", key});
  }
  ExpectPushed(*sub, {});
  const absl::Duration ttl = absl::Seconds(10);
  Same(Script(internal::AcquireCommand(ab, "tok-1", ttl)));
  ExpectPushed(*sub, {Message("taken:a", kTakenMessage),
                      Message("taken:b", kTakenMessage)});
  // b is taken: nothing set, nothing published.
  Same(Script(internal::AcquireCommand(bc, "tok-2", ttl)));
  ExpectPushed(*sub, {});
  Same(Script(internal::ReleaseCommand(ab, "tok-1")));
  ExpectPushed(*sub, {Message("taken:a", kReleasedMessage),
                      Message("taken:b", kReleasedMessage)});
  Same(Script(internal::AcquireCommand(bc, "tok-2", ttl)));
  ExpectPushed(*sub, {Message("taken:b", kTakenMessage),
                      Message("taken:c", kTakenMessage)});
}

TEST_F(SimRedisDifferentialTest, FencedAcquirePublishesTakenOnlyWhenItSets) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  const std::vector<std::string> locks = {"fenced:a", "fenced:b"};
  const std::vector<std::string> counters = {"fenced:fence:a",
                                             "fenced:fence:b"};
  // The counters and the marker are keys of the script too; only the lock
  // keys are published on.
  for (const char* channel : {"fenced:a", "fenced:b", "fenced:fence:a",
                              "fenced:fence:b", "fenced:marker"}) {
    SameOn(*sub, {"SUBSCRIBE", channel});
  }
  ExpectPushed(*sub, {});
  Same({"SET", "fenced:fence:a", "7"});
  const absl::Duration ttl = absl::Seconds(10);
  Same(Script(internal::FencedAcquireCommand(locks, counters, "fenced:marker",
                                             "tok-1", ttl)));
  ExpectPushed(*sub, {Message("fenced:a", kTakenMessage),
                      Message("fenced:b", kTakenMessage)});
  Same(Script(internal::FencedAcquireCommand(locks, counters, "fenced:marker",
                                             "tok-2", ttl)));
  ExpectPushed(*sub, {});
  // One resource, the engine's usual form.
  Same(Script(internal::FencedAcquireCommand("fenced:c", "fenced:fence:c",
                                             "fenced:marker", "tok-3", ttl)));
  ExpectPushed(*sub, {});  // Not subscribed to fenced:c.
  SameOn(*sub, {"SUBSCRIBE", "fenced:c"});
  Same(Script(internal::ReleaseCommand("fenced:c", "tok-3")));
  Same(Script(internal::FencedAcquireCommand("fenced:c", "fenced:fence:c",
                                             "fenced:marker", "tok-4", ttl)));
  ExpectPushed(*sub, {Message("fenced:c", kReleasedMessage),
                      Message("fenced:c", kTakenMessage)});
}

TEST(SimRedisAuthDifferentialTest, RequirepassMatches) {
  RedisServer::Config config;
  config.requirepass = "s3cret";
  auto server = RedisServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  // A raw connection without AUTH: Client() would authenticate.
  auto client = RedisClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  SimRedis::Config sim_config;
  sim_config.requirepass = "s3cret";
  sim_config.persistence = SimRedis::Persistence::kNone;  // As the server.
  const absl::Time now = absl::FromUnixSeconds(1790000000);
  SimRedis sim(sim_config, 1, now);
  SimRedis::Connection conn;
  // Unknown commands and arity are judged before authentication.
  for (const Argv& argv : {Argv{"GET", "k"},
                           Argv{"PING"},
                           Argv{"nosuch"},
                           Argv{"GET"},
                           Argv{"SUBSCRIBE", "ch"},
                           Argv{"UNSUBSCRIBE"},
                           Argv{"PUBLISH", "ch", "x"},
                           Argv{"SUBSCRIBE"},
                           Argv{"SCRIPT", "LOAD", "return 1"},
                           Argv{"CONFIG", "GET", "append*"},
                           Argv{"CONFIG", "GET"},
                           Argv{"CONFIG", "nosuch"},
                           Argv{"CONFIG"},
                           Argv{"AUTH", "wrong"},
                           Argv{"AUTH", "default", "wrong"},
                           Argv{"AUTH", "bob", "s3cret"},
                           Argv{"GET", "k"},
                           Argv{"AUTH", "s3cret"},
                           Argv{"GET", "k"},
                           Argv{"AUTH", "default", "s3cret"},
                           Argv{"SET", "k", "v"},
                           Argv{"CONFIG", "GET", "appendonly"},
                           Argv{"AUTH", "wrong"},
                           Argv{"GET", "k"}}) {
    auto real = (*client)->Command(argv);
    ASSERT_TRUE(real.ok()) << real.status();
    const RedisReply simulated = sim.Execute(now, conn, argv);
    EXPECT_TRUE(SameReply(*real, simulated))
        << Describe(argv) << "\n  real: " << real->DebugString()
        << "\n  sim:  " << SimDebugString(simulated);
  }
}

// CONFIG GET against real servers run with each persistence the engine
// tells apart. Real Redis answers a flat [name, value, ...] array (RESP2)
// in its config hash table's order, which a per-process random hash seed
// changes from one start to the next (seen: "append*" in a different order
// on each of three starts of one redis-server 7.0.15): the pairs must
// match, their order cannot.
using ConfigPairs = std::vector<std::pair<std::string, std::string>>;

// The pairs of a CONFIG GET reply (real or simulated), sorted, if it is a
// flat array of an even number of bulk strings; nullopt otherwise.
template <typename R>
std::optional<ConfigPairs> PairsOf(const R& reply) {
  // Reply::Type and RedisReply::Type list the same kinds in the same order.
  const int array = static_cast<int>(RedisReply::Type::kArray);
  const int string = static_cast<int>(RedisReply::Type::kString);
  if (static_cast<int>(reply.type) != array || reply.elements.size() % 2 != 0) {
    return std::nullopt;
  }
  ConfigPairs pairs;
  for (size_t i = 0; i < reply.elements.size(); i += 2) {
    if (static_cast<int>(reply.elements[i].type) != string ||
        static_cast<int>(reply.elements[i + 1].type) != string) {
      return std::nullopt;
    }
    pairs.emplace_back(reply.elements[i].str, reply.elements[i + 1].str);
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

std::string Format(const ConfigPairs& pairs) {
  std::string out;
  for (const auto& [name, value] : pairs) {
    absl::StrAppend(&out, " ", name, "=\"", value, "\"");
  }
  return out;
}

struct PersistenceCase {
  const char* what;
  // The server's command line, after Persistence::kNone's.
  Argv server_args;
  SimRedis::Config sim;
};

SimRedis::Config SimWith(SimRedis::Persistence persistence,
                         std::vector<SimRedis::SaveRule> save = {}) {
  SimRedis::Config config;
  config.persistence = persistence;
  config.save = std::move(save);
  return config;
}

TEST(SimRedisConfigDifferentialTest, ConfigGetMatchesForEachPersistence) {
  const std::vector<PersistenceCase> cases = {
      {"no persistence", {}, SimWith(SimRedis::Persistence::kNone)},
      {"aof always",
       {"--appendonly", "yes", "--appendfsync", "always"},
       SimWith(SimRedis::Persistence::kAofAlways)},
      {"aof everysec",
       {"--appendonly", "yes", "--appendfsync", "everysec"},
       SimWith(SimRedis::Persistence::kAofEverysec)},
      {"rdb snapshots",
       {"--save", "1 1 30 100"},
       SimWith(SimRedis::Persistence::kRdb, {{1, 1}, {30, 100}})},
  };
  const std::vector<Argv> gets = {
      {"CONFIG", "GET", "append*"},
      {"CONFIG", "GET", "appendonly"},
      {"CONFIG", "GET", "APPENDFSYNC"},
      {"config", "get", "appendonly", "appendfsync", "save"},
      {"CONFIG", "GET", "save"},
      {"CONFIG", "GET", "?ppend[o]nly"},
      {"CONFIG", "GET", "APPEND[a-f]*"},
      {"CONFIG", "GET", "appendonly", "APPENDONLY"},
      {"CONFIG", "GET", "APPENDONLY", "append*"},
      {"CONFIG", "GET", "append*", "APPENDONLY"},
      {"CONFIG", "GET", "*policy"},
      {"CONFIG", "GET", "nosuch"},
      {"CONFIG", "GET", "nosuch*"},
  };
  const std::vector<Argv> errors = {
      {"CONFIG"}, {"CONFIG", "GET"}, {"CONFIG", "nosuch"}};
  const absl::Time now = absl::FromUnixSeconds(1790000000);
  for (const PersistenceCase& c : cases) {
    SCOPED_TRACE(c.what);
    RedisServer::Config config;
    config.extra_args = c.server_args;
    auto server = RedisServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    auto client = (*server)->Client();
    ASSERT_TRUE(client.ok()) << client.status();
    SimRedis sim(c.sim, 3, now);
    SimRedis::Connection conn;
    for (const Argv& argv : gets) {
      auto real = (*client)->Command(argv);
      ASSERT_TRUE(real.ok()) << real.status();
      const RedisReply simulated = sim.Execute(now, conn, argv);
      const std::optional<ConfigPairs> real_pairs = PairsOf(*real);
      const std::optional<ConfigPairs> sim_pairs = PairsOf(simulated);
      ASSERT_TRUE(real_pairs.has_value()) << real->DebugString();
      ASSERT_TRUE(sim_pairs.has_value()) << SimDebugString(simulated);
      EXPECT_EQ(*sim_pairs, *real_pairs)
          << Describe(argv) << "\n  real:" << Format(*real_pairs)
          << "\n  sim: " << Format(*sim_pairs);
    }
    for (const Argv& argv : errors) {
      auto real = (*client)->Command(argv);
      ASSERT_TRUE(real.ok()) << real.status();
      const RedisReply simulated = sim.Execute(now, conn, argv);
      EXPECT_TRUE(SameReply(*real, simulated))
          << Describe(argv) << "\n  real: " << real->DebugString()
          << "\n  sim:  " << SimDebugString(simulated);
    }
    // "*": the simulator knows a few of the ~380 parameters; each it gives
    // must be the real one.
    auto real = (*client)->Command({"CONFIG", "GET", "*"});
    ASSERT_TRUE(real.ok()) << real.status();
    const std::optional<ConfigPairs> every = PairsOf(*real);
    const std::optional<ConfigPairs> some =
        PairsOf(sim.Execute(now, conn, {"CONFIG", "GET", "*"}));
    ASSERT_TRUE(every.has_value() && some.has_value());
    EXPECT_GE(some->size(), 7u);
    for (const auto& pair : *some) {
      EXPECT_TRUE(std::binary_search(every->begin(), every->end(), pair))
          << pair.first << "=\"" << pair.second << "\" is not the real one";
    }
  }
}

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

TEST_F(SimRedisDifferentialTest, SetCommandsMatch) {
  Same({"SADD", "s", "a", "b", "a"});
  Same({"SADD", "s", "b", "c"});
  Same({"SCARD", "s"});
  SameMembers({"SMEMBERS", "s"});
  Same({"SREM", "s", "a", "nothing"});
  Same({"SREM", "s", "nothing"});
  Same({"SCARD", "missing"});
  Same({"SMEMBERS", "missing"});
  Same({"SREM", "missing", "a"});
  // A set takes a TTL like any key.
  Same({"PEXPIRE", "s", "20000"});
  CloseInteger({"PTTL", "s"}, 100);
  Same({"EXISTS", "s"});
  // The last member's removal deletes the key.
  Same({"SREM", "s", "b", "c"});
  Same({"EXISTS", "s"});
  Same({"PTTL", "s"});
  // The other type: WRONGTYPE, both ways; SET replaces a set unless GET.
  Same({"SET", "str", "v"});
  Same({"SADD", "str", "a"});
  Same({"SREM", "str", "a"});
  Same({"SCARD", "str"});
  Same({"SMEMBERS", "str"});
  Same({"SADD", "set", "a"});
  Same({"GET", "set"});
  Same({"SET", "set", "v", "GET"});
  Same({"SCARD", "set"});
  Same({"SET", "set", "v"});
  Same({"GET", "set"});
  Same({"SADD", "set2", "x"});
  Same({"DEL", "set2", "set"});
  Same({"SADD"});
  Same({"SADD", "k"});
  Same({"SMEMBERS"});
  Same({"SCARD", "a", "b"});
}

TEST_F(SimRedisDifferentialTest, SemaphoreAcquireMatches) {
  LoadScripts();
  const std::vector<std::string> slots = {"sem:0", "sem:1", "sem:2"};
  const absl::Duration ttl = absl::Seconds(10);
  auto acquire = [&](const char* token, std::vector<int> candidates,
                     int limit = 3) {
    return Script(internal::SemaphoreAcquireCommand("sem:limit", slots, token,
                                                    ttl, limit, candidates));
  };
  // Grant: the candidates set with the TTL, the limit key written, the
  // free slots after the grant listed.
  Same(acquire("tok-a", {0, 2}));
  Same({"GET", "sem:0"});
  Same({"GET", "sem:2"});
  Same({"EXISTS", "sem:1"});
  CloseInteger({"PTTL", "sem:0"}, 100);
  Same({"GET", "sem:limit"});
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // One candidate taken: nothing set, every free slot listed.
  Same(acquire("tok-b", {1, 2}));
  Same({"EXISTS", "sem:1"});
  Same(acquire("tok-b", {0}));
  // The last free slot: granted, nothing left free.
  Same(acquire("tok-b", {1}));
  Same({"GET", "sem:1"});
  Same(acquire("tok-c", {0}));
  // A holder of another limit: {-1, the limit stored}, nothing changes.
  Same({"DEL", "sem:1"});
  Same(acquire("tok-c", {1}, 4));
  Same({"EXISTS", "sem:1"});
  Same(acquire("tok-c", {1}, 2));
  Same({"GET", "sem:limit"});
  // The limit key keeps the longer of its TTL and the grant's.
  Same({"SET", "sem:limit", "3", "PX", "60000"});
  Same(acquire("tok-c", {1}));
  CloseInteger({"PTTL", "sem:limit"}, 100);
  CloseInteger({"PTTL", "sem:1"}, 100);
  Same({"DEL", "sem:1"});
  Same({"SET", "sem:limit", "3", "PX", "2000"});
  Same(acquire("tok-d", {1}));
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // A limit key without a TTL gets the grant's (PTTL -1 is the shorter).
  Same({"DEL", "sem:0", "sem:1", "sem:2"});
  Same({"SET", "sem:limit", "3"});
  Same(acquire("tok-e", {2}));
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // A missing limit key is written; a refusal does not write one.
  Same({"DEL", "sem:limit"});
  Same(acquire("tok-f", {2}));
  Same({"EXISTS", "sem:limit"});
  Same(acquire("tok-f", {0, 1}));
  Same({"GET", "sem:limit"});
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // No candidate at all: a grant of nothing, the limit key still written.
  Same({"DEL", "sem:limit"});
  Same(acquire("tok-g", {}));
  Same({"GET", "sem:limit"});
}

// The test-only, unsafe majority-of-counters script
// (tests/sim/unsafe_rules.h, UnsafeRules::semaphore_counters): a master admits
// while enough of its own slots are free, taking the lowest free ones.
TEST_F(SimRedisDifferentialTest, SemaphoreCountersAcquireMatches) {
  LoadScripts();
  const std::vector<std::string> slots = {"sem:0", "sem:1", "sem:2"};
  const absl::Duration ttl = absl::Seconds(10);
  auto acquire = [&](const char* token, int permits, int limit = 3) {
    return Script(redlock::testing::SemaphoreCountersAcquireCommand(
        "sem:limit", slots, token, ttl, limit, permits));
  };
  // Any free slots: the lowest ones, here slots 0 and 2 around a taken 1.
  Same({"SET", "sem:1", "other", "PX", "20000"});
  Same(acquire("tok-a", 2));
  Same({"GET", "sem:0"});
  Same({"GET", "sem:2"});
  CloseInteger({"PTTL", "sem:2"}, 100);
  Same({"GET", "sem:limit"});
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // No room: nothing set, the free slots (none) listed.
  Same(acquire("tok-b", 1));
  Same({"DEL", "sem:0"});
  Same(acquire("tok-b", 2));
  Same({"EXISTS", "sem:0"});
  Same(acquire("tok-b", 1));
  Same({"GET", "sem:0"});
  // Another limit stored: {-1, it}, nothing changes.
  Same({"DEL", "sem:0"});
  Same(acquire("tok-c", 1, 2));
  Same({"EXISTS", "sem:0"});
  // The limit key keeps the longer of its TTL and the grant's.
  Same({"SET", "sem:limit", "3", "PX", "60000"});
  Same(acquire("tok-c", 1));
  CloseInteger({"PTTL", "sem:limit"}, 100);
}

TEST_F(SimRedisDifferentialTest, SemaphoreExtendMatches) {
  LoadScripts();
  const std::vector<std::string> slots = {"sem:0", "sem:1", "sem:2"};
  const std::vector<std::string> mine = {"sem:0", "sem:2"};
  Same(Script(internal::SemaphoreAcquireCommand("sem:limit", slots, "tok-a",
                                                absl::Seconds(10), 3,
                                                std::vector<int>{0, 2})));
  auto extend = [&](const char* token, int limit,
                    absl::Duration ttl = absl::Seconds(30)) {
    return Script(
        internal::SemaphoreExtendCommand("sem:limit", mine, token, ttl, limit));
  };
  // Granted: every slot and the limit key to the new TTL.
  Same(extend("tok-a", 3));
  CloseInteger({"PTTL", "sem:0"}, 100);
  CloseInteger({"PTTL", "sem:2"}, 100);
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // A wrong token: 0, nothing changes.
  Same(extend("tok-b", 3, absl::Seconds(50)));
  CloseInteger({"PTTL", "sem:0"}, 100);
  // The limit key keeps a longer TTL of its own; a shorter extension only
  // shortens the slots.
  Same(extend("tok-a", 3, absl::Seconds(5)));
  CloseInteger({"PTTL", "sem:0"}, 100);
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // Another limit stored: the SEMLIMIT error reply, nothing changes.
  Same(extend("tok-a", 4, absl::Seconds(40)));
  CloseInteger({"PTTL", "sem:0"}, 100);
  Same({"GET", "sem:limit"});
  // The limit key gone: written again with the extension's TTL.
  Same({"DEL", "sem:limit"});
  Same(extend("tok-a", 3, absl::Seconds(20)));
  Same({"GET", "sem:limit"});
  CloseInteger({"PTTL", "sem:limit"}, 100);
  // A slot lost (expired or taken over): 0, and no slot is created.
  Same({"DEL", "sem:2"});
  Same(extend("tok-a", 3, absl::Seconds(40)));
  Same({"EXISTS", "sem:2"});
  CloseInteger({"PTTL", "sem:0"}, 100);
  Same({"SET", "sem:2", "tok-z", "PX", "10000"});
  Same(extend("tok-a", 3, absl::Seconds(40)));
  Same({"GET", "sem:2"});
  // The limit checked only once every slot holds the token.
  Same(extend("tok-a", 4, absl::Seconds(40)));
}

// The read-write lock's keys, spelled as SharedHolderKey() and the rest
// spell them: a reader's key is the index's base followed by its token.
constexpr char kR[] = "rw:R";
constexpr char kWaiting[] = "rw:wait";
constexpr char kIndex[] = "rw:readers";
std::string ReaderKey(absl::string_view token) {
  return absl::StrCat("rw:reader:", token);
}

Argv ReaderAcquire(absl::string_view token, absl::Duration ttl,
                   int max_readers = 16) {
  return Script(internal::ReaderAcquireCommand(
      kR, ReaderKey(token), kWaiting, kIndex, token, ttl, max_readers));
}
Argv ReaderExtend(absl::string_view token, absl::Duration ttl) {
  return Script(
      internal::ReaderExtendCommand(kR, ReaderKey(token), kIndex, token, ttl));
}
Argv ReaderRelease(absl::string_view token, bool announce = true) {
  return Script(internal::ReaderReleaseCommand(kR, ReaderKey(token), kIndex,
                                               token, announce));
}

TEST_F(SimRedisDifferentialTest, ReaderAcquireMatches) {
  LoadScripts();
  const absl::Duration ttl = absl::Seconds(10);
  // Granted: R shared, the reader's key, the index with R's TTL.
  Same(ReaderAcquire("tok-a", ttl));
  Same({"GET", kR});
  Same({"GET", ReaderKey("tok-a")});
  SameMembers({"SMEMBERS", kIndex});
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", ReaderKey("tok-a")}, 100);
  CloseInteger({"PTTL", kIndex}, 100);
  // R keeps the longer TTL: a shorter reader leaves it, a longer raises it
  // and the index with it.
  Same(ReaderAcquire("tok-b", absl::Seconds(3)));
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", ReaderKey("tok-b")}, 100);
  Same(ReaderAcquire("tok-c", absl::Seconds(40)));
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", kIndex}, 100);
  Same({"SCARD", kIndex});
  // A writer waiting: refused, nothing written.
  Same({"SET", kWaiting, "waiter-1", "PX", "5000"});
  Same(ReaderAcquire("tok-d", ttl));
  Same({"EXISTS", ReaderKey("tok-d")});
  Same({"SCARD", kIndex});
  Same({"DEL", kWaiting});
  // A writer holding R: refused, nothing written.
  Same({"SET", kR, "writer-token", "PX", "5000"});
  Same(ReaderAcquire("tok-d", ttl));
  Same({"GET", kR});
  Same({"EXISTS", ReaderKey("tok-d")});
  // R shared without a TTL (never so set by the library) gets the reader's.
  Same({"SET", kR, "shared"});
  Same(ReaderAcquire("tok-d", ttl));
  CloseInteger({"PTTL", kR}, 100);
}

TEST_F(SimRedisDifferentialTest, ReaderCapIsCountedAfterPruningGoneReaders) {
  LoadScripts();
  const absl::Duration ttl = absl::Seconds(10);
  Same(ReaderAcquire("tok-a", ttl, /*max_readers=*/2));
  Same(ReaderAcquire("tok-b", ttl, 2));
  // At the cap, every reader live: refused, nothing written.
  Same(ReaderAcquire("tok-c", ttl, 2));
  Same({"EXISTS", ReaderKey("tok-c")});
  SameMembers({"SMEMBERS", kIndex});
  // A reader's key gone (expired): pruned from the index, then granted.
  Same({"DEL", ReaderKey("tok-a")});
  Same(ReaderAcquire("tok-c", ttl, 2));
  SameMembers({"SMEMBERS", kIndex});
  Same({"GET", ReaderKey("tok-c")});
  // Pruned but still at the cap: refused, and the prune is kept.
  Same({"SADD", kIndex, "ghost"});
  Same(ReaderAcquire("tok-d", ttl, 2));
  SameMembers({"SMEMBERS", kIndex});
  Same({"EXISTS", ReaderKey("tok-d")});
  // A larger cap (another client's ARGV) lets it in without a prune.
  Same({"SADD", kIndex, "ghost"});
  Same(ReaderAcquire("tok-d", ttl, 4));
  SameMembers({"SMEMBERS", kIndex});
  // A cap of 0 refuses even an empty index's first reader.
  Same({"DEL", kR, kIndex});
  Same(ReaderAcquire("tok-e", ttl, 0));
  Same({"EXISTS", kR, kIndex, ReaderKey("tok-e")});
}

TEST_F(SimRedisDifferentialTest, ReaderExtendMatches) {
  LoadScripts();
  Same(ReaderAcquire("tok-a", absl::Seconds(10)));
  Same(ReaderAcquire("tok-b", absl::Seconds(10)));
  // Granted: the reader's key to the TTL, R and the index to the longer.
  Same(ReaderExtend("tok-a", absl::Seconds(30)));
  CloseInteger({"PTTL", ReaderKey("tok-a")}, 100);
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", kIndex}, 100);
  CloseInteger({"PTTL", ReaderKey("tok-b")}, 100);
  // A shorter extension shortens only the reader's key.
  Same(ReaderExtend("tok-b", absl::Seconds(2)));
  CloseInteger({"PTTL", ReaderKey("tok-b")}, 100);
  CloseInteger({"PTTL", kR}, 100);
  // The token put back in an index that lost it.
  Same({"SREM", kIndex, "tok-b"});
  Same(ReaderExtend("tok-b", absl::Seconds(2)));
  SameMembers({"SMEMBERS", kIndex});
  // Not this reader's key: 0, nothing changes.
  Same(ReaderExtend("tok-c", absl::Seconds(50)));
  Same({"EXISTS", ReaderKey("tok-c")});
  CloseInteger({"PTTL", kR}, 100);
  Same({"SET", ReaderKey("tok-b"), "someone-else", "PX", "10000"});
  Same(ReaderExtend("tok-b", absl::Seconds(50)));
  CloseInteger({"PTTL", ReaderKey("tok-b")}, 100);
  // R a writer's (or gone): a reader's extension never touches it.
  Same({"SET", kR, "writer-token", "PX", "4000"});
  Same(ReaderExtend("tok-a", absl::Seconds(50)));
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", ReaderKey("tok-a")}, 100);
  Same({"DEL", kR});
  Same(ReaderExtend("tok-a", absl::Seconds(50)));
  Same({"EXISTS", kR});
}

TEST_F(SimRedisDifferentialTest, ReaderReleaseShrinksThenDeletesTheSharedKey) {
  LoadScripts();
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  SameOn(*sub, {"SUBSCRIBE", kR});
  ExpectPushed(*sub, {});
  Same(ReaderAcquire("tok-a", absl::Seconds(30)));
  Same(ReaderAcquire("tok-b", absl::Seconds(10)));
  Same(ReaderAcquire("tok-c", absl::Seconds(20)));
  // Not this reader's: 0, nothing changes.
  Same(ReaderRelease("tok-z"));
  Same({"SCARD", kIndex});
  // The longest reader leaves: R and the index shrink to the longest left.
  Same(ReaderRelease("tok-a"));
  Same({"EXISTS", ReaderKey("tok-a")});
  SameMembers({"SMEMBERS", kIndex});
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", kIndex}, 100);
  ExpectPushed(*sub, {});
  Same(ReaderRelease("tok-a"));
  // A reader whose key is gone is pruned by the next release.
  Same({"DEL", ReaderKey("tok-c")});
  Same({"SADD", kIndex, "ghost"});
  Same(ReaderRelease("tok-b"));
  // The last reader gone: R and the index deleted, and "released" on R.
  Same({"EXISTS", kR, kIndex});
  ExpectPushed(*sub, {Message(kR, kReleasedMessage)});
  // A lost attempt's cleanup: deleted quietly.
  Same(ReaderAcquire("tok-d", absl::Seconds(10)));
  Same(ReaderRelease("tok-d", /*announce=*/false));
  Same({"EXISTS", kR, kIndex});
  ExpectPushed(*sub, {});
}

TEST_F(SimRedisDifferentialTest, ReaderReleaseLeavesAWritersOrAnEndlessKey) {
  LoadScripts();
  // R a writer's: the reader's own key and index entry go, R stays.
  Same(ReaderAcquire("tok-a", absl::Seconds(10)));
  Same({"SET", kR, "writer-token", "PX", "4000"});
  Same(ReaderRelease("tok-a"));
  Same({"EXISTS", ReaderKey("tok-a")});
  Same({"GET", kR});
  CloseInteger({"PTTL", kR}, 100);
  Same({"EXISTS", kIndex});
  // A reader key without a TTL left: R is kept as it is (fail closed).
  Same({"DEL", kR});
  Same(ReaderAcquire("tok-b", absl::Seconds(10)));
  Same(ReaderAcquire("tok-c", absl::Seconds(10)));
  Same({"SET", ReaderKey("tok-c"), "tok-c"});
  Same(ReaderRelease("tok-b"));
  CloseInteger({"PTTL", kR}, 100);
  Same({"GET", kR});
  SameMembers({"SMEMBERS", kIndex});
  // With a TTL again, the last reader's release deletes R and the index.
  Same({"SET", ReaderKey("tok-c"), "tok-c", "PX", "5000"});
  Same(ReaderRelease("tok-c"));
  Same({"EXISTS", kR, kIndex});
}

TEST_F(SimRedisDifferentialTest, ScriptCallErrorsStopTheScriptWhereRedisDoes) {
  LoadScripts();
  // The index a string: the reader acquire's SCARD fails (line 4).
  Same({"SET", kIndex, "not-a-set"});
  Same(ReaderAcquire("tok-a", absl::Seconds(10)));
  Same({"EXISTS", kR, ReaderKey("tok-a")});
  // The reader release fails at its SREM (line 3), its DEL already done.
  Same({"SET", ReaderKey("tok-a"), "tok-a", "PX", "10000"});
  Same(ReaderRelease("tok-a"));
  Same({"EXISTS", ReaderKey("tok-a")});
  // The reader extend's SADD (line 6), after R and its own key were
  // extended.
  Same({"SET", kR, "shared", "PX", "1000"});
  Same({"SET", ReaderKey("tok-a"), "tok-a", "PX", "1000"});
  Same(ReaderExtend("tok-a", absl::Seconds(20)));
  CloseInteger({"PTTL", kR}, 100);
  CloseInteger({"PTTL", ReaderKey("tok-a")}, 100);
  // R a set: the reader acquire's GET (line 2).
  Same({"DEL", kR, kIndex});
  Same({"SADD", kR, "x"});
  Same(ReaderAcquire("tok-b", absl::Seconds(10)));
  // The semaphore's limit key a set: the acquire's GET (line 1), and the
  // extend's (line 4) once the slots hold the token.
  const std::vector<std::string> slots = {"sem:0", "sem:1"};
  const std::vector<std::string> slot0 = {"sem:0"};
  const absl::Duration ttl = absl::Seconds(10);
  Same({"SADD", "sem:limit", "x"});
  Same(Script(internal::SemaphoreAcquireCommand("sem:limit", slots, "tok-c",
                                                ttl, 2, std::vector<int>{0})));
  Same({"EXISTS", "sem:0"});
  Same({"SET", "sem:0", "tok-c", "PX", "10000"});
  Same(Script(
      internal::SemaphoreExtendCommand("sem:limit", slot0, "tok-c", ttl, 2)));
  // A slot a set: the extend's GET of it (line 2); the acquire only asks
  // whether it exists, so it counts as taken.
  Same({"DEL", "sem:limit", "sem:0"});
  Same({"SADD", "sem:1", "x"});
  Same({"SET", "sem:0", "tok-c", "PX", "10000"});
  Same(Script(
      internal::SemaphoreExtendCommand("sem:limit", slots, "tok-c", ttl, 2)));
  Same({"DEL", "sem:0"});
  Same(Script(internal::SemaphoreAcquireCommand("sem:limit", slots, "tok-c",
                                                ttl, 2, std::vector<int>{1})));
  Same(Script(internal::SemaphoreAcquireCommand("sem:limit", slots, "tok-c",
                                                ttl, 2, std::vector<int>{0})));
  Same({"GET", "sem:0"});
}

}  // namespace
}  // namespace redlock::sim
