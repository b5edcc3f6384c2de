// Copyright 2026 The redlock Authors.
//
// An election's record and what one master's reading of it means: bytes
// from a master are untrusted, so anything malformed is no leader.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "src/algorithm/election.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {
namespace {

RedisReply Reading(std::optional<std::string> lease,
                   std::optional<std::string> record) {
  auto value = [](const std::optional<std::string>& v) {
    return v.has_value() ? RedisReply::String(*v) : RedisReply::Nil();
  };
  return RedisReply::Array({value(lease), value(record)});
}

TEST(LeaderRecordTest, FormatsAndParsesBack) {
  LeaderRecord record;
  record.epoch = 42;
  record.revision = 3;
  record.token = "3f9a";
  record.value = "10.0.0.7:8080 with spaces\nand a newline";
  const std::string text = FormatLeaderRecord(record);
  EXPECT_EQ(text, "42 3 3f9a 10.0.0.7:8080 with spaces\nand a newline");
  absl::StatusOr<LeaderRecord> parsed = ParseLeaderRecord(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->epoch, 42u);
  EXPECT_EQ(parsed->revision, 3u);
  EXPECT_EQ(parsed->token, "3f9a");
  EXPECT_EQ(parsed->value, record.value);
}

TEST(LeaderRecordTest, AnEmptyValueIsAValue) {
  absl::StatusOr<LeaderRecord> parsed = ParseLeaderRecord("1 1 tok ");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->value, "");
}

TEST(LeaderRecordTest, MalformedRecordsAreRefused) {
  for (const char* text :
       {"", "1", "1 1", "1 1 tok", "0 1 tok v", "1 0 tok v", "01 1 tok v",
        "-1 1 tok v", "+1 1 tok v", "1 1  v", "x 1 tok v", "1 x tok v",
        "18446744073709551616 1 tok v", "1 99999999999999999999999 tok v",
        " 1 1 tok v"}) {
    absl::StatusOr<LeaderRecord> parsed = ParseLeaderRecord(text);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInternal)
        << "\"" << text << "\"";
  }
  EXPECT_TRUE(ParseLeaderRecord("18446744073709551615 1 tok v").ok());
}

TEST(LeaderReadingTest, NoLeaseIsVacantWhateverTheRecordSays) {
  absl::StatusOr<LeaderReading> r = ParseLeaderReading(
      Reading(std::nullopt, std::string("5 1 tok old-leader")));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, LeaderReading::Kind::kVacant);
  EXPECT_EQ(LeaderReadVote(Reading(std::nullopt, std::nullopt)).value(),
            Vote::kDenied);
}

TEST(LeaderReadingTest, ALeaseLeadsOnlyWithARecordOfItsOwnToken) {
  absl::StatusOr<LeaderReading> leading =
      ParseLeaderReading(Reading("tok", std::string("5 2 tok v")));
  ASSERT_TRUE(leading.ok()) << leading.status();
  EXPECT_EQ(leading->kind, LeaderReading::Kind::kLeading);
  EXPECT_EQ(leading->record.epoch, 5u);
  EXPECT_EQ(leading->record.revision, 2u);
  EXPECT_EQ(leading->record.value, "v");
  EXPECT_EQ(LeaderReadVote(Reading("tok", std::string("5 2 tok v"))).value(),
            Vote::kGranted);

  // The previous leader's record under a new lease: a campaign that has not
  // written its own yet. Not a leader.
  absl::StatusOr<LeaderReading> stale =
      ParseLeaderReading(Reading("new", std::string("5 2 tok v")));
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->kind, LeaderReading::Kind::kHeld);
  EXPECT_EQ(LeaderReadVote(Reading("new", std::string("5 2 tok v"))).value(),
            Vote::kDenied);
  EXPECT_EQ(ParseLeaderReading(Reading("tok", std::nullopt))->kind,
            LeaderReading::Kind::kHeld);
}

TEST(LeaderReadingTest, AnythingElseIsAFailedVoteNeverALeader) {
  const std::vector<RedisReply> bad = {
      RedisReply::Error("ERR wrong number of arguments"),
      RedisReply::String("tok"),
      RedisReply::Integer(1),
      RedisReply::Array({RedisReply::String("tok")}),
      RedisReply::Array({RedisReply::String("tok"), RedisReply::Integer(5)}),
      RedisReply::Array({RedisReply::Integer(1), RedisReply::Nil()}),
      Reading("tok", std::string("garbage")),
      Reading("tok", std::string("0 1 tok v")),
      RedisReply::Array({RedisReply::String("tok"),
                         RedisReply::String("1 1 tok v"), RedisReply::Nil()}),
  };
  for (const RedisReply& reply : bad) {
    EXPECT_FALSE(LeaderReadVote(reply).ok());
  }
}

TEST(ProclaimCommandTest, CarriesTheLeaseTheRecordAndTheRecordFields) {
  LeaderRecord record;
  record.epoch = 9;
  record.revision = 2;
  record.token = "abc";
  record.value = "v v";
  Command c = ProclaimCommand("lease", "record", record);
  EXPECT_EQ(c.script, &ProclaimScript());
  EXPECT_EQ(c.num_keys, 2);
  EXPECT_EQ(c.args, (std::vector<std::string>{"lease", "record", "abc", "9",
                                              "2", "v v"}));
  Command read = LeaderReadCommand("lease", "record");
  EXPECT_EQ(read.script, nullptr);
  EXPECT_EQ(read.args, (std::vector<std::string>{"MGET", "lease", "record"}));
}

}  // namespace
}  // namespace redlock::internal
