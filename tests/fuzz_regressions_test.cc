// Copyright 2026 The redlock Authors.
//
// The fuzzers' invariants (fuzz/invariants.h) as ordinary tests: the
// committed seed corpus, hand-picked edge cases, and every input a fuzzer has
// crashed on (add it to the lists below with a comment naming the bug). Also
// checks that the invariant checks themselves catch what they should.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/invariants.h"
#include "gtest/gtest.h"
#include "src/redis_reply.h"

namespace redlock::fuzz {
namespace {

using internal::RedisReply;

std::vector<std::string> CorpusFiles(const std::string& name) {
  std::vector<std::string> files;
  const std::filesystem::path dir =
      std::filesystem::path(REDLOCK_FUZZ_CORPUS_DIR) / name;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// URIs beyond the seed corpus: every error path of the parser, passwords in
// malformed URIs, and passwords that coincide with message text or a host.
const std::string kUriCases[] = {
    "",
    "redis://",
    "redis://:",
    "redis://@",
    "redis://:@host",
    "redis://user@host",
    "redis://user:secretpw@",
    "redis://:secretpw@host:0",
    "redis://:secretpw@host:65536",
    "redis://:secretpw@host:-1",
    "redis://:secretpw@host/x",
    "redis://:secretpw@host/2147483648",
    "redis://:secretpw@ho st",
    "redis://:secretpw@host?x=1",
    "redis://:secretpw@host#frag",
    "redis://:secretpw@[::1",
    "redis://:secretpw@[::g]:1",
    "redis://:secretpw@[::1]x",
    "redis://:secretpw@::1:6379",
    "redis://:secretpw@999.1.1.1",
    "redis://:secretpw@a..b",
    "redis://:sec%zzret@host",
    "redis://:sec ret@host",
    "redis://:secret@pw@host",
    "redis://u:p:w:x@host",
    "rediss://:secretpw@host",
    "http://:secretpw@host",
    ":secretpw@host",
    "redis:/:secretpw@host",
    // The password is also the host, and also words of the error message.
    "redis://:myhost@myhost:0",
    "redis://:must be@host",
    "redis://:percent-encoded@h st",
    "redis://:secretpw@host:6379,redis://:secretpw@host:6379",
    "redis://a:1,redis://b:2,,redis://c:3",
    "redis://%41:pw%3a%40x@h",
    std::string(300, 'a'),
    "redis://:" + std::string(300, 'p') + "@host:70000",
};

TEST(UriInvariantsTest, SeedCorpusHolds) {
  const std::vector<std::string> files = CorpusFiles("uri");
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    const std::string input = ReadFile(file);
    EXPECT_EQ(CheckMasterUri(input), "") << file;
    EXPECT_EQ(CheckValidateOptions(input), "") << file;
  }
}

TEST(UriInvariantsTest, EdgeCasesHold) {
  for (const std::string& input : kUriCases) {
    EXPECT_EQ(CheckMasterUri(input), "") << input;
    EXPECT_EQ(CheckValidateOptions(input), "") << input;
  }
}

TEST(UriInvariantsTest, SeedsParseAsExpected) {
  // Keeps the seeds meaningful: the valid ones really are valid.
  EXPECT_TRUE(ParseMasterUri("redis://:s3cretpass@10.0.0.3:6379/0").ok());
  EXPECT_TRUE(ParseMasterUri("redis://[::1]:6380/15").ok());
  EXPECT_TRUE(ParseMasterUri("redis://host.example.:65535/2147483647").ok());
  Options options;
  options.masters = {"redis://10.0.0.1", "redis://10.0.0.1:6379"};
  EXPECT_FALSE(ValidateOptions(options).ok());  // The same master twice.
}

TEST(UriInvariantsTest, PasswordCheckCatchesALeak) {
  const std::string input = "redis://:topsecret@host:0";
  const absl::string_view password = WrittenPassword(input);
  ASSERT_EQ(password, "topsecret");
  // A message that echoes the URI unredacted is a leak...
  auto echo = [](absl::string_view text) { return std::string(text); };
  EXPECT_NE(CheckPasswordHidden(input, input, password, echo), "");
  // ...one that has the same bytes for another reason is not.
  auto fixed = [](absl::string_view) { return std::string("topsecret"); };
  EXPECT_EQ(CheckPasswordHidden("topsecret", input, password, fixed), "");
  EXPECT_EQ(CheckPasswordHidden("no secrets here", input, password, echo),
            "");
}

TEST(UriInvariantsTest, WrittenPasswordSplitsLikeTheParser) {
  EXPECT_EQ(WrittenPassword("redis://u:p:q@h@host"), "p:q@h");
  EXPECT_EQ(WrittenPassword("redis://user@host"), "");
  EXPECT_EQ(WrittenPassword("rediss://:pw@host"), "");
}

TEST(ReplyInvariantsTest, SeedCorpusHolds) {
  const std::vector<std::string> files = CorpusFiles("reply");
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    const std::string input = ReadFile(file);
    for (size_t split = 0; split <= input.size(); ++split) {
      EXPECT_EQ(CheckRespStream(input, split), "") << file << " @" << split;
    }
  }
}

TEST(ReplyInvariantsTest, MalformedStreamsHold) {
  const std::string cases[] = {
      "",
      "\r\n",
      "?\r\n",
      ":\r\n",
      ":abc\r\n",
      ":99999999999999999999999\r\n",
      ":-9223372036854775808\r\n",
      "$-2\r\n",
      "$5\r\nab\r\n",
      "$2\r\nabcd\r\n",
      "*-2\r\n",
      "*3\r\n:1\r\n",
      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
      "*3\r\n:1\r\n$3\r\n 42\r\n$0\r\n\r\n",
      "*3\r\n:1\r\n$2\r\n-1\r\n$0\r\n\r\n",
      "*3\r\n:1\r\n:42\r\n$0\r\n\r\n",
      "*3\r\n:2\r\n$1\r\n1\r\n$0\r\n\r\n",
      "*3\r\n:1\r\n$21\r\n184467440737095516160\r\n$0\r\n\r\n",
      "*3\r\n:1\r\n$20\r\n18446744073709551615\r\n$9\r\nreborn:12\r\n",
      "+OK \r\n+ok\r\n+OKAY\r\n$2\r\nOK\r\n",
      ":2\r\n:-1\r\n",
      "-\r\n-NOSCRIPT\r\n-ERR\r\n",
  };
  for (const std::string& input : cases) {
    for (size_t split = 0; split <= input.size(); ++split) {
      EXPECT_EQ(CheckRespStream(input, split), "") << input << " @" << split;
    }
  }
}

TEST(ReplyInvariantsTest, VoteCheckAcceptsTheDocumentedShapes) {
  EXPECT_EQ(CheckVotes(RedisReply::Status("OK")), "");
  EXPECT_EQ(CheckVotes(RedisReply::Nil()), "");
  EXPECT_EQ(CheckVotes(RedisReply::Integer(1)), "");
  EXPECT_EQ(CheckVotes(RedisReply::Integer(0)), "");
  EXPECT_EQ(CheckVotes(RedisReply::Error("BUSY script")), "");
  EXPECT_EQ(CheckVotes(RedisReply::Array({RedisReply::Integer(1),
                                          RedisReply::String("7"),
                                          RedisReply::String("trusted:1")})),
            "");
  EXPECT_EQ(CheckVotes(RedisReply::Array({RedisReply::Integer(0),
                                          RedisReply::Nil(),
                                          RedisReply::Nil()})),
            "");
}

}  // namespace
}  // namespace redlock::fuzz
