// Copyright 2026 The redlock Authors.
//
// What the SimRedis tests share (sim_redis_test.cc, sim_redis_handoff_test.cc,
// sim_redis_fault_test.cc): reply comparison against a real redis-server and
// the differential fixture that runs the same commands on both.

#ifndef REDLOCK_TESTS_SIM_SIM_REDIS_FIXTURE_H_
#define REDLOCK_TESTS_SIM_SIM_REDIS_FIXTURE_H_

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
#include "tests/sim/sim_redis.h"
#include "tests/sim/unsafe_rules.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"

namespace redlock::sim {

using internal::AllScripts;
using internal::CommandArgv;
using internal::RedisReply;
using testing::RedisClient;
using testing::RedisServer;
using testing::Reply;
using Argv = std::vector<std::string>;

// Reply::Type and RedisReply::Type list the same kinds in the same order.
inline std::string SimDebugString(const RedisReply& r) {
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

inline bool SameType(const Reply& real, const RedisReply& sim) {
  return static_cast<int>(real.type) == static_cast<int>(sim.type);
}

// Exact equality of type and value, recursively.
inline bool SameReply(const Reply& real, const RedisReply& sim) {
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

inline bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

// "name:value" lines of an INFO reply. Every line must end in \r\n.
inline std::map<std::string, std::string> InfoFields(const std::string& info) {
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
inline std::string Describe(const Argv& argv) {
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

  inline static RedisServer* server_ = nullptr;
  std::unique_ptr<RedisClient> real_;
  std::unique_ptr<SimRedis> sim_;
  SimRedis::Connection conn_;
  absl::Time now_;
  // Taken from the simulator, not yet looked at by ExpectPushed().
  std::vector<SimRedis::Push> pushed_;
};

inline RedisReply Message(const std::string& channel,
                          absl::string_view payload) {
  return RedisReply::Array({RedisReply::String("message"),
                            RedisReply::String(channel),
                            RedisReply::String(std::string(payload))});
}

inline RedisReply Subscribed(const std::string& kind,
                             const std::string& channel, int64_t count) {
  return RedisReply::Array({RedisReply::String(kind),
                            RedisReply::String(channel),
                            RedisReply::Integer(count)});
}

inline Argv Script(const internal::Command& command, bool eval = false) {
  return CommandArgv(command, eval);
}

// Replies that carry a server TIME stamp (16 digits of microseconds) are
// compared with the stamp replaced: any 16-digit run in the real server's
// reply, exactly the simulator's master clock (1790000000000000) in its.
inline std::string Unstamped(absl::string_view s, bool sim) {
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

inline bool SameUnstamped(const Reply& real, const RedisReply& sim) {
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

// CONFIG GET replies compared as sorted pairs (the order is a server's
// hash order), and a simulator configured for one persistence.
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

inline std::string Format(const ConfigPairs& pairs) {
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

inline SimRedis::Config SimWith(SimRedis::Persistence persistence,
                                std::vector<SimRedis::SaveRule> save = {}) {
  SimRedis::Config config;
  config.persistence = persistence;
  config.save = std::move(save);
  return config;
}

}  // namespace redlock::sim

#endif  // REDLOCK_TESTS_SIM_SIM_REDIS_FIXTURE_H_
