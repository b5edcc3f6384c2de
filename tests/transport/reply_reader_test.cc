// Copyright 2026 The redlock Authors.
//
// The connection's reply reader (src/transport/reply_reader.h), alone: the
// bounds on what a server may send, replies split anywhere, and what it says
// of bytes that are not RESP.

#include "src/transport/reply_reader.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/algorithm/redis_reply.h"

namespace redlock {
namespace {

using internal::RedisReply;
using internal::ReplyReader;
using ::testing::HasSubstr;

std::vector<RedisReply> FeedAll(ReplyReader& reader, absl::string_view bytes,
                                absl::Status* status) {
  std::vector<RedisReply> out;
  *status = reader.Feed(bytes, &out);
  return out;
}

TEST(ReplyReaderTest, RepliesSplitAtEveryByteReadAsWhole) {
  const std::string stream =
      "+OK\r\n:42\r\n$5\r\nhello\r\n*2\r\n$1\r\na\r\n*1\r\n:7\r\n$-1\r\n-ERR "
      "no\r\n";
  for (size_t split = 0; split <= stream.size(); ++split) {
    ReplyReader reader;
    std::vector<RedisReply> out;
    ASSERT_TRUE(reader.Feed(stream.substr(0, split), &out).ok());
    ASSERT_TRUE(reader.Feed(stream.substr(split), &out).ok());
    ASSERT_EQ(out.size(), 6u) << split;
    EXPECT_EQ(out[2].str, "hello");
    EXPECT_EQ(out[3].elements[1].elements[0].integer, 7);
    EXPECT_EQ(out[4].type, RedisReply::Type::kNil);
    EXPECT_EQ(out[5].type, RedisReply::Type::kError);
    EXPECT_FALSE(reader.mid_reply()) << split;
  }
}

TEST(ReplyReaderTest, KnowsWhenAReplyHasBegun) {
  ReplyReader reader;
  absl::Status status;
  FeedAll(reader, "$5\r\nhel", &status);
  EXPECT_TRUE(reader.mid_reply());
  FeedAll(reader, "lo\r\n", &status);
  EXPECT_FALSE(reader.mid_reply());
  FeedAll(reader, "*2\r\n:1\r\n", &status);
  EXPECT_TRUE(reader.mid_reply());  // An array with one element to come.
}

TEST(ReplyReaderTest, ManySmallRepliesAtOnceAreNotOneLongReply) {
  std::string stream;
  for (int i = 0; i < 10000; ++i) stream += "$10\r\n0123456789\r\n";
  ReplyReader reader;
  absl::Status status;
  EXPECT_EQ(FeedAll(reader, stream, &status).size(), 10000u);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(ReplyReaderTest, AnEndlessBulkStringIsRefusedAtTheBoundHoldingNoMore) {
  ReplyReader reader;
  std::vector<RedisReply> out;
  absl::Status status = reader.Feed("$1000000000\r\n", &out);
  ASSERT_TRUE(status.ok());
  const std::string chunk(4096, 'x');
  size_t fed = 0;
  while (status.ok() && fed < (8u << 20)) {
    status = reader.Feed(chunk, &out);
    fed += chunk.size();
    EXPECT_LE(reader.buffered(), internal::kMaxReplyBytes + 1);
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("longer than 65536"));
  EXPECT_LE(fed, internal::kMaxReplyBytes + 2 * chunk.size());
}

TEST(ReplyReaderTest, ALongStatusLineAndALongArrayAreRefused) {
  ReplyReader line;
  absl::Status status;
  FeedAll(line, "+" + std::string(70000, 'a') + "\r\n", &status);
  EXPECT_THAT(status.message(), HasSubstr("longer than"));

  // Each element small, the whole too large.
  std::string array = "*10000\r\n";
  for (int i = 0; i < 10000; ++i) array += "$20\r\n01234567890123456789\r\n";
  ReplyReader many;
  EXPECT_TRUE(FeedAll(many, array, &status).empty());
  EXPECT_THAT(status.message(), HasSubstr("longer than"));

  ReplyReader header;
  FeedAll(header, "*380000000\r\n", &status);
  EXPECT_THAT(status.message(), HasSubstr("declaring 380000000 elements"));
}

TEST(ReplyReaderTest, NonRespBytesAreNamedForWhatTheyLookLike) {
  absl::Status status;
  ReplyReader http;
  FeedAll(http, "HTTP/1.1 400 Bad Request\r\n\r\n", &status);
  EXPECT_THAT(status.message(), HasSubstr("not a Redis server"));
  ReplyReader tls;
  FeedAll(tls, std::string("\x15\x03\x03\x00\x02\x02\x46", 7), &status);
  EXPECT_THAT(status.message(), HasSubstr("speaks TLS"));
  // The same words whatever the split (wire_fuzzer's find: "H" alone
  // once gave hiredis's bare protocol error).
  for (const std::string& stream : {std::string("HTTP/1.1 400 Bad Request\r\n"),
                                    std::string("\x16\x03\x01\x00\x05", 5)}) {
    ReplyReader whole;
    std::vector<RedisReply> out;
    const absl::Status at_once = whole.Feed(stream, &out);
    EXPECT_FALSE(at_once.ok());
    ReplyReader bytewise;
    absl::Status last;
    for (char c : stream) {
      last = bytewise.Feed(absl::string_view(&c, 1), &out);
      if (!last.ok()) break;
    }
    EXPECT_EQ(last, at_once);
  }
  std::string nested;
  for (int i = 0; i < 12; ++i) nested += "*1\r\n";
  nested += ":1\r\n";
  ReplyReader deep;
  FeedAll(deep, nested, &status);
  EXPECT_THAT(status.message(), HasSubstr("nested"));
  // Once refused, always refused.
  std::vector<RedisReply> out;
  EXPECT_FALSE(deep.Feed("+OK\r\n", &out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace redlock
