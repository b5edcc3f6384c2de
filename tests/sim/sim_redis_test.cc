// Copyright 2026 The redlock Authors.
//
// SimRedis against a real redis-server: the same command sequences go to
// both and the replies must match in type and value, except what cannot
// match (run_id, clock readings, uptime), which is compared by shape. The
// hand-off script's cases and the faults on the simulator alone have files
// of their own beside this one.

#include "src/algorithm/election.h"
#include "tests/sim/sim_redis_fixture.h"

namespace redlock::sim {
namespace {

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

// A fenced writer or one of several resources marks itself waiting only
// where a resource is held, keeps the longer TTL, and stops at a waiting key
// of another type with what it marked before kept.
TEST_F(SimRedisDifferentialTest, WriterMarkMarksOnlyHeldResources) {
  for (const internal::Script* script : AllScripts()) {
    Same({"SCRIPT", "LOAD", std::string(script->source)});
  }
  const std::vector<std::string> locks = {"m:a", "m:b", "m:c"};
  const std::vector<std::string> waits = {"m:wait:a", "m:wait:b", "m:wait:c"};
  Same({"SET", "m:a", "tok", "PX", "10000"});
  Same({"SET", "m:c", "shared", "PX", "10000"});
  Same({"SADD", "m:wait:c", "other"});
  Same({"PEXPIRE", "m:wait:c", "60000"});
  Same(Script(
      internal::WriterMarkCommand(locks, waits, "ee", absl::Seconds(5))));
  Same({"SMEMBERS", "m:wait:a"});
  Same({"EXISTS", "m:wait:b"});
  Same({"SCARD", "m:wait:c"});
  CloseInteger({"PTTL", "m:wait:c"}, 100);  // 60 s: the longer kept.
  CloseInteger({"PTTL", "m:wait:a"}, 100);  // 5 s.
  // A waiting key of another type: an error naming the SADD's line, a
  // marked before it kept.
  Same({"SET", "m:wait:c", "x"});
  Same({"SREM", "m:wait:a", "ee"});
  Same(Script(
      internal::WriterMarkCommand(locks, waits, "ff", absl::Seconds(5))));
  Same({"SMEMBERS", "m:wait:a"});
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

TEST_F(SimRedisDifferentialTest, MgetMatches) {
  Same({"MGET"});
  Same({"SET", "a", "1"});
  Same({"SET", "b", ""});
  Same({"SADD", "s", "m"});
  Same({"MGET", "a"});
  // Missing and non-string keys are nil; a key may repeat.
  Same({"MGET", "a", "missing", "b", "s", "a"});
  Same({"SET", "short", "x", "PX", "100"});
  Advance(absl::Milliseconds(150));
  Same({"MGET", "short", "a"});
}

TEST_F(SimRedisDifferentialTest, ProclaimMatches) {
  Same({"SCRIPT", "LOAD", std::string(internal::ProclaimScript().source)});
  std::unique_ptr<Peer> sub = NewPeer();
  ASSERT_NE(sub, nullptr);
  SameOn(*sub, {"SUBSCRIBE", "lease"});
  auto proclaim = [](absl::string_view token, uint64_t epoch, uint64_t revision,
                     absl::string_view value) {
    internal::LeaderRecord record;
    record.token = std::string(token);
    record.epoch = epoch;
    record.revision = revision;
    record.value = std::string(value);
    return Script(internal::ProclaimCommand("lease", "record", record));
  };
  // No lease, or one held by another token: nothing written, nothing said.
  Same(proclaim("tok-a", 7, 1, "a1"));
  Same({"SET", "lease", "tok-b", "PX", "10000"});
  Same(proclaim("tok-a", 7, 1, "a1"));
  Same({"MGET", "lease", "record"});
  ExpectPushed(*sub, {});
  // The holder writes and publishes "taken" on the lease's channel.
  Same({"SET", "lease", "tok-a", "PX", "10000"});
  Same(proclaim("tok-a", 7, 1, "a1"));
  Same({"GET", "record"});
  ExpectPushed(*sub, {Message("lease", kTakenMessage)});
  Same(proclaim("tok-a", 7, 3, "a3 with spaces"));
  ExpectPushed(*sub, {Message("lease", kTakenMessage)});
  // Its record at this revision or a later one is kept: 1, unchanged,
  // unsaid.
  Same(proclaim("tok-a", 7, 2, "a2"));
  Same(proclaim("tok-a", 7, 3, "a3 again"));
  Same({"GET", "record"});
  ExpectPushed(*sub, {});
  // Another token's record is overwritten whatever its revision.
  Same({"SET", "record", "6 99 tok-old old"});
  Same(proclaim("tok-a", 7, 1, "a1"));
  Same({"GET", "record"});
  ExpectPushed(*sub, {Message("lease", kTakenMessage)});
  // Records the pattern does not match are overwritten.
  for (const char* odd :
       {"", "garbage", "7 3 tok-a", "x 9 tok-a v", "7 x tok-a v",
        "7  9 tok-a v", "7 9 tok-a\tv", "07 0009 tok-a v", "-7 9 tok-a v",
        "7 99999999999999999999999 tok-a v"}) {
    Same({"SET", "record", odd});
    Same(proclaim("tok-a", 7, 2, "a2"));
    Same({"GET", "record"});
  }
  // A set where the record or the lease would be: the GET's error, the
  // record untouched.
  Same({"DEL", "record"});
  Same({"SADD", "record", "m"});
  Same(proclaim("tok-a", 7, 4, ""));
  Same({"MGET", "lease", "record"});
  Same({"DEL", "record"});
  Same({"SADD", "lease", "m"});
  Same(proclaim("tok-a", 7, 4, ""));
  Same({"MGET", "lease", "record"});
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
