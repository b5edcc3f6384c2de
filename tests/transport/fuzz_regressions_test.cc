// Copyright 2026 The redlock Authors.
//
// The fuzzers' invariants (fuzz/invariants.h) as ordinary tests: the
// committed seed corpus, hand-picked edge cases, and every input a fuzzer has
// crashed on (add it to the lists below with a comment naming the bug). Also
// checks that the invariant checks themselves catch what they should.

#include <hiredis/hiredis.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/invariants.h"
#include "fuzz/wire_invariants.h"
#include "gtest/gtest.h"
#include "src/algorithm/redis_reply.h"
#include "tests/support/text_files.h"

namespace redlock::fuzz {
namespace {

using internal::RedisReply;
using ::redlock::testing::ReadFile;

std::vector<std::string> CorpusFiles(const std::string& name) {
  std::vector<std::string> files;
  const std::filesystem::path dir =
      std::filesystem::path(REDLOCK_FUZZ_CORPUS_DIR) / name;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  return files;
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
    // uri_fuzzer, 2026-12-01 on branch wire (a8a780e): a '?member=' before
    // the '@' makes the parser take what UriError() redacts as the password
    // for query parameters, and the "unknown query parameter" message
    // (src/config/options.cc ParseQuery) shows it unredacted.
    std::string("redis://BBBBBRBBBBBBd?member=0.187003&\x00\x00\x00", 41) +
        "6214\xe5s:s02,redis://120.1:700@/1/",
    // uri_fuzzer, 2026-12-01 on main (9408b03): a Unix socket has a path
    // and no host; the invariant, not the parser, was wrong.
    "unix:///localhost",
    "unix://:secretpw@/run/redis.sock?db=2",
    "unix://:secretpw@relative.sock",
    "rediss://:secretpw@host:0",
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

// The uri_fuzzer find above, readable. The password the URI's redaction
// hides ("pa?member=x&ss:word") is partly shown by the query's message
// ("ss:word@host"), which the whole-password invariant cannot see. Red on
// branch wire at a8a780e (src/config/options.cc ParseQuery, "unknown query
// parameter").
TEST(UriInvariantsTest, QueryMessageShowsNoPasswordText) {
  const absl::Status status =
      ParseMasterUri("redis://:pa?member=x&ss:word@host").status();
  ASSERT_FALSE(status.ok());
  // No piece of the password "pa?member=x&ss:word" (the message may say
  // "password", a word of its own).
  for (absl::string_view piece : {"ss:word", "pa?", "x&ss"}) {
    EXPECT_EQ(status.message().find(piece), absl::string_view::npos)
        << piece << " in " << status.message();
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
  EXPECT_EQ(CheckPasswordHidden("no secrets here", input, password, echo), "");
}

TEST(UriInvariantsTest, WrittenPasswordSplitsLikeTheParser) {
  EXPECT_EQ(WrittenPassword("redis://u:p:q@h@host"), "p:q@h");
  EXPECT_EQ(WrittenPassword("redis://user@host"), "");
  // Every scheme the parser takes (rediss:// and unix:// since the owned
  // transport); none for one it refuses.
  EXPECT_EQ(WrittenPassword("rediss://:pw@host"), "pw");
  EXPECT_EQ(WrittenPassword("unix://u:pw@/run/redis.sock"), "pw");
  EXPECT_EQ(WrittenPassword("http://:pw@host"), "");
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
      // reply_fuzzer's out-of-memory in CI (2026-11-30): hiredis 0.14
      // callocs the declared elements at once (3 GB here).
      "*380000000\r\n",
      "*2147483647\r\n",
      "*99999999999\r\n",
      "*65537\r\n:1\r\n",
  };
  for (const std::string& input : cases) {
    for (size_t split = 0; split <= input.size(); ++split) {
      EXPECT_EQ(CheckRespStream(input, split), "") << input << " @" << split;
    }
  }
}

// Feeds `input` to a reader and returns redisReaderGetReply's result.
int ReadOnce(redisReader* reader, const std::string& input, void** reply) {
  EXPECT_EQ(redisReaderFeed(reader, input.data(), input.size()), REDIS_OK);
  return redisReaderGetReply(reader, reply);
}

TEST(BoundReplyReaderTest, RefusesArraysDeclaringMoreThanTheLimit) {
  // (A negative count other than -1 hiredis refuses itself.)
  for (const std::string header : {"*380000000\r\n", "*65537\r\n"}) {
    redisReader* reader = redisReaderCreate();
    internal::BoundReplyReader(reader);
    void* reply = nullptr;
    EXPECT_EQ(ReadOnce(reader, header, &reply), REDIS_ERR) << header;
    EXPECT_EQ(reader->err, REDIS_ERR_OOM) << header;
    EXPECT_EQ(reply, nullptr);
    redisReaderFree(reader);
  }
  // Without the bound, hiredis takes the header and waits for the elements.
  redisReader* plain = redisReaderCreate();
  void* reply = nullptr;
  EXPECT_EQ(ReadOnce(plain, "*65537\r\n", &reply), REDIS_OK);
  EXPECT_EQ(reply, nullptr);
  redisReaderFree(plain);
}

TEST(BoundReplyReaderTest, ReadsRepliesWithinTheLimitAsBefore) {
  redisReader* reader = redisReaderCreate();
  internal::BoundReplyReader(reader);
  internal::BoundReplyReader(reader);  // Twice is the same as once.
  void* raw = nullptr;
  ASSERT_EQ(ReadOnce(reader, "*3\r\n:1\r\n$2\r\n42\r\n*-1\r\n", &raw),
            REDIS_OK);
  ASSERT_NE(raw, nullptr);
  const RedisReply reply =
      internal::FromHiredis(static_cast<const redisReply*>(raw));
  freeReplyObject(raw);
  ASSERT_EQ(reply.type, RedisReply::Type::kArray);
  ASSERT_EQ(reply.elements.size(), 3u);
  EXPECT_EQ(reply.elements[0].integer, 1);
  EXPECT_EQ(reply.elements[1].str, "42");
  EXPECT_EQ(reply.elements[2].type, RedisReply::Type::kNil);
  // The limit itself is allowed: the header is taken, elements awaited.
  ASSERT_EQ(ReadOnce(reader, "*65536\r\n", &raw), REDIS_OK);
  EXPECT_EQ(raw, nullptr);
  redisReaderFree(reader);
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
  EXPECT_EQ(
      CheckVotes(RedisReply::Array(
          {RedisReply::Integer(0), RedisReply::Nil(), RedisReply::Nil()})),
      "");
}

// The wire fuzzer's harness (fuzz/wire_invariants.h): a real Master or
// Subscriber on a real Unix socket, the harness playing the server.
class WireInvariantsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(harness_.Init(), ""); }
  WireHarness harness_;
};

TEST_F(WireInvariantsTest, SeedCorpusHolds) {
  const std::vector<std::string> files = CorpusFiles("wire");
  ASSERT_GE(files.size(), 20u);
  for (const std::string& file : files) {
    EXPECT_EQ(harness_.Run(ReadFile(file)), "") << file;
  }
}

// The recorded handshakes take a Master all the way to ready() (cut at reply
// boundaries or inside replies), and the Subscriber hears the one release
// published while it listened: the harness really runs the code it fuzzes.
TEST_F(WireInvariantsTest, RecordedSeedsCompleteTheHandshake) {
  const std::string dir = std::string(REDLOCK_FUZZ_CORPUS_DIR) + "/wire/";
  for (const char* name :
       {"master-replies", "master-cut", "master-auth-select-replies",
        "master-auth-select-cut", "master-noscript-replies",
        "master-noscript-cut"}) {
    EXPECT_EQ(harness_.Run(ReadFile(dir + name)), "") << name;
    EXPECT_TRUE(harness_.last_ready()) << name;
  }
  // One piece: the extend is sent after its reply already came, which is a
  // reply nobody asked for, and the connection is lost.
  EXPECT_EQ(harness_.Run(ReadFile(dir + "master-whole")), "");
  EXPECT_FALSE(harness_.last_ready());
  for (const char* name : {"subscriber-replies", "subscriber-auth-cut"}) {
    EXPECT_EQ(harness_.Run(ReadFile(dir + name)), "") << name;
    EXPECT_EQ(harness_.last_messages(), 1) << name;
  }
}

// The layout of fuzz/wire_fuzzer.cc: what the corpus and the crash inputs
// mean depends on it.
TEST(WireInputTest, ParsesTargetFlagsPiecesAndRepeats) {
  WireInput in = ParseWireInput("");
  EXPECT_EQ(in.target, WireTarget::kMaster);
  ASSERT_EQ(in.pieces.size(), 1u);
  EXPECT_EQ(in.pieces[0], "");

  // Subscriber (1 + 3 * flags), flags 1: AUTH; cuts 2 (3 and 1 bytes).
  const std::string subscriber_input =
      std::string("\x04\x02\x03\x00\x01\x00", 6) + "abcdef";
  in = ParseWireInput(subscriber_input);
  EXPECT_EQ(in.target, WireTarget::kSubscriber);
  EXPECT_TRUE(in.password);
  EXPECT_FALSE(in.select);
  ASSERT_EQ(in.pieces.size(), 3u);
  EXPECT_EQ(in.pieces[0], "abc");
  EXPECT_EQ(in.pieces[1], "d");
  EXPECT_EQ(in.pieces[2], "ef");

  // Reader; no cuts, the last piece 2^3 times.
  // The pieces point into the input: it must outlive them.
  const std::string reader_input = std::string("\x02\x30", 2) + "xy";
  in = ParseWireInput(reader_input);
  EXPECT_EQ(in.target, WireTarget::kReader);
  ASSERT_EQ(in.pieces.size(), 8u);
  for (absl::string_view piece : in.pieces) EXPECT_EQ(piece, "xy");

  EXPECT_EQ(MakeWireInput(4, {"abc", "d", "ef"}), subscriber_input);
}

// Streams against a Master whose handshake the harness answers as a real
// redis-server 7.0 did (the seed), with something wrong added.
TEST_F(WireInvariantsTest, BrokenStreamsAfterARealHandshakeHold) {
  const std::string seed =
      ReadFile(std::string(REDLOCK_FUZZ_CORPUS_DIR) + "/wire/master-replies");
  const WireInput real = ParseWireInput(seed);
  std::vector<std::string> handshake;
  for (absl::string_view piece : real.pieces) handshake.emplace_back(piece);
  const std::vector<std::string> tails = {
      ":1\r\n:1\r\n:1\r\n:1\r\n",             // replies nobody asked for
      "HTTP/1.1 400 Bad Request\r\n\r\n",     // not RESP
      "$70000\r\n" + std::string(8000, 'x'),  // a bulk string over the cap
      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",  // nested
      "-NOSCRIPT No matching script\r\n",  // the release falls back
      "*99999999\r\n",                     // an array over the limit
  };
  for (const std::string& tail : tails) {
    for (uint8_t mode : {0, 2}) {  // Master, ReplyReader.
      std::vector<std::string> pieces(handshake.begin(), handshake.end() - 1);
      pieces.push_back(tail);
      EXPECT_EQ(harness_.Run(MakeWireInput(mode, pieces)), "")
          << absl::CHexEscape(tail);
    }
  }
}

// The Subscriber after its real confirmations: something that loses the
// connection, then a real release message, which must go unheard.
TEST_F(WireInvariantsTest, NothingHeardAfterABrokenPush) {
  const std::string seed = ReadFile(std::string(REDLOCK_FUZZ_CORPUS_DIR) +
                                    "/wire/subscriber-replies");
  const WireInput real = ParseWireInput(seed);
  std::vector<std::string> pieces;
  for (absl::string_view piece : real.pieces) pieces.emplace_back(piece);
  ASSERT_GE(pieces.size(), 2u);
  const std::string message = pieces.back();  // The published release.
  pieces.pop_back();
  for (const std::string& broken : {
           std::string("*3\r\n$7\r\nmessage\r\n:1\r\n:2\r\n"),  // malformed
           std::string("*2\r\n$9\r\nsubscribe\r\n:1\r\n"),      // too short
           std::string("-ERR closing\r\n"),                     // an error
           std::string("GET / HTTP/1.1\r\n"),                   // not RESP
       }) {
    std::vector<std::string> stream = pieces;
    stream.push_back(broken + message);
    EXPECT_EQ(harness_.Run(MakeWireInput(1, stream)), "")
        << absl::CHexEscape(broken);
    EXPECT_EQ(harness_.last_messages(), 0) << absl::CHexEscape(broken);
  }
  // The same message with nothing broken before it is heard.
  pieces.push_back(message);
  EXPECT_EQ(harness_.Run(MakeWireInput(1, pieces)), "");
  EXPECT_EQ(harness_.last_messages(), 1);
}

// A ReplyReader fed the same stream in pieces of every size agrees with one
// fed it whole, and the bound holds for a stream far longer than the cap.
TEST(WireReaderTest, PiecesAgreeWithTheWholeAndTheBoundHolds) {
  const std::string stream =
      "+OK\r\n$5\r\nhello\r\n*2\r\n:1\r\n$-1\r\n-ERR x\r\n*-1\r\n";
  for (size_t size = 1; size <= stream.size(); ++size) {
    std::vector<absl::string_view> pieces;
    for (size_t at = 0; at < stream.size(); at += size) {
      pieces.push_back(absl::string_view(stream).substr(at, size));
    }
    EXPECT_EQ(CheckReaderPieces(pieces), "") << size;
  }
  // An endless bulk string, 192 KB in 4 KB pieces: refused at the cap.
  const std::string head = "$999999\r\n";
  const std::string filler(4096, 'x');
  std::vector<absl::string_view> pieces = {head};
  for (int i = 0; i < 48; ++i) pieces.push_back(filler);
  EXPECT_EQ(CheckReaderPieces(pieces), "");
}

}  // namespace
}  // namespace redlock::fuzz
