// Copyright 2026 The redlock Authors.
//
// What a handshake tells about a master (src/engine/master_identity.h):
// TIME, INFO server and persistence read from replies, and whether it
// restarted since it was marked. Pure: no server.

#include "src/engine/master_identity.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "src/algorithm/persistence.h"
#include "src/algorithm/redis_reply.h"

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

// CONFIG GET's reply: name, value pairs.
RedisReply ConfigReply(const std::vector<std::string>& pairs) {
  std::vector<RedisReply> elements;
  for (const std::string& s : pairs) elements.push_back(RedisReply::String(s));
  return RedisReply::Array(std::move(elements));
}

// Empty after a restart: the configuration says so (no AOF, save "") and the
// server's start loaded no key. save "" does not keep Redis from loading a
// dump.rdb it finds (a SAVE by hand), and a server that does not say what
// it loaded is not known to be empty.
TEST(EmptyAfterRestartTest, NeedsTheConfigAndAStartThatLoadedNothing) {
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

}  // namespace
}  // namespace redlock::internal
