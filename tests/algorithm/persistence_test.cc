// Copyright 2026 The redlock Authors.
//
// A master's persistence as CONFIG GET tells it (src/algorithm/persistence.h):
// what is durable, what is a risk and how it is described. Pure: no server.

#include "src/algorithm/persistence.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {
namespace {

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
      AddConfigReply(
          i == refused ? RedisReply::Error("NOPERM no config|get") : replies[i],
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
