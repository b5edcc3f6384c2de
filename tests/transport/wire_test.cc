// Copyright 2026 The redlock Authors.
//
// The library's own connection (src/transport/wire.h) and its reply reader
// (src/transport/reply_reader.h), alone: the bounds on what a server may send,
// and the socket's behaviour toward the caller's process. The same connection
// against misbehaving servers, inside the whole client, is in
// tests/transport/hostile_master_test.cc.

#include "src/transport/wire.h"

#include <event2/event.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redlock/options.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/transport/reply_reader.h"
#include "src/transport/runtime.h"

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

TEST(RespEncodingTest, ACommandIsAnArrayOfBulkStringsAppendedToWhatIsThere) {
  std::string out = "before";
  const std::string ten(10, 'x');
  const absl::string_view argv[] = {"SET", "k", "", ten};
  internal::AppendRespCommand(argv, &out);
  EXPECT_EQ(out, "before*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$10\r\n" + ten +
                     "\r\n");
  out.clear();
  std::vector<absl::string_view> many(12, "a");
  internal::AppendRespCommand(many, &out);
  std::string expected = "*12\r\n";
  for (int i = 0; i < 12; ++i) expected += "$1\r\na\r\n";
  EXPECT_EQ(out, expected);
}

// The bytes a keep-alive batch sends to every master are the EVALSHA call of
// its script, spelled out here by hand.
TEST(RespEncodingTest, AnEncodedCallIsTheEvalshaCallOfItsScript) {
  const std::vector<std::string> keys = {"redlock:a", "redlock:b"};
  const std::string token = "0123456789abcdef";
  internal::BatchExtendEntry entry;
  entry.keys = keys;
  entry.token = token;
  entry.ttl = absl::Seconds(3);
  internal::Command command = internal::BatchExtendCommand({entry});
  ASSERT_NE(command.script, nullptr);
  internal::EncodeCall(&command);
  auto bulk = [](absl::string_view s) {
    return absl::StrCat("$", s.size(), "\r\n", s, "\r\n");
  };
  std::string expected = absl::StrCat(
      "*", command.args.size() + 3, "\r\n", bulk("EVALSHA"),
      bulk(command.script->sha1), bulk(absl::StrCat(command.num_keys)));
  for (const std::string& arg : command.args) expected += bulk(arg);
  EXPECT_EQ(command.encoded, expected);
  EXPECT_EQ(command.script->sha1.size(), 40u);
  EXPECT_GE(command.num_keys, 2);
}

// What a batch sends is made straight into its text; it must be the same
// bytes as the call made from its arguments, and its NOSCRIPT resend the
// same EVAL call.
TEST(RespEncodingTest, ABatchMadeAsTextIsTheCallMadeFromItsArguments) {
  const std::vector<std::string> one = {"redlock:a"};
  const std::vector<std::string> slots = {"redlock:{s}:1", "redlock:{s}:4"};
  const std::vector<std::string> many = {"redlock:x", "redlock:y", "redlock:z"};
  const std::string token = "0123456789abcdef0123456789abcdef";
  const std::string other = "fedcba9876543210fedcba9876543210";
  const std::string limit_key = "redlock:{s}:limit";
  auto entry = [](const std::vector<std::string>& keys,
                  const std::string& token, absl::Duration ttl) {
    internal::BatchExtendEntry e;
    e.keys = keys;
    e.token = token;
    e.ttl = ttl;
    return e;
  };
  std::vector<internal::BatchExtendEntry> entries = {
      entry(one, token, absl::Seconds(30)),
      entry(slots, other, absl::Seconds(30)),
      entry(many, token, absl::Milliseconds(2500)),
      entry(one, other, absl::Seconds(30))};
  entries[1].limit_key = &limit_key;  // A permit set.
  entries[1].limit = 8;
  for (size_t n = 1; n <= entries.size(); ++n) {
    const absl::Span<const internal::BatchExtendEntry> some(entries.data(), n);
    internal::Command from_args = internal::BatchExtendCommand(some);
    internal::EncodeCall(&from_args);
    const internal::Command as_text = internal::EncodedBatchExtendCommand(some);
    EXPECT_EQ(as_text.encoded, from_args.encoded) << n;
    EXPECT_TRUE(as_text.args.empty());
    EXPECT_EQ(as_text.num_keys, from_args.num_keys);
    EXPECT_EQ(as_text.script, from_args.script);

    internal::CommandViews eval;
    internal::CommandArgvViews(from_args, /*eval=*/true, &eval);
    std::string expected;
    internal::AppendRespCommand(eval.argv, &expected);
    EXPECT_EQ(internal::EvalText(as_text), expected) << n;

    std::vector<absl::string_view> argv;
    ASSERT_TRUE(internal::SplitRespCommand(as_text.encoded, &argv));
    internal::CommandViews evalsha;
    internal::CommandArgvViews(from_args, /*eval=*/false, &evalsha);
    EXPECT_EQ(std::vector<absl::string_view>(evalsha.argv.begin(),
                                             evalsha.argv.end()),
              argv);
  }
}

TEST(RespEncodingTest, SplittingTakesOnlyARequestsExactText) {
  std::vector<absl::string_view> argv;
  ASSERT_TRUE(
      internal::SplitRespCommand("*2\r\n$3\r\nGET\r\n$0\r\n\r\n", &argv));
  EXPECT_EQ(argv, (std::vector<absl::string_view>{"GET", ""}));
  for (const char* bad :
       {"", "*", "*1\r\n", "*1\r\n$3\r\nGE\r\n", "*1\r\n$3\r\nGETX\r\n",
        "*1\r\n$3\r\nGET\r\nmore", "*1\r\n:3\r\n", "*x\r\n", "+OK\r\n",
        "*1\r\n$99999999999999999999999\r\n", "*2\r\n$3\r\nGET\r\n"}) {
    EXPECT_FALSE(internal::SplitRespCommand(bad, &argv)) << bad;
  }
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

// A Unix socket that accepts one connection and closes it at once.
class ClosingPeer {
 public:
  ClosingPeer() {
    char dir[] = "/tmp/redlock-wire-XXXXXX";
    dir_ = mkdtemp(dir) != nullptr ? dir : "";
    path_ = dir_ + "/peer.sock";
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd_, 4) != 0) {
      path_.clear();
    }
  }
  ~ClosingPeer() {
    close(fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  // Accepts the pending connection and closes it.
  bool AcceptAndClose() {
    const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return false;
    close(conn);
    return true;
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
};

struct Outcome final : internal::ConnectionObserver {
  void OnConnect(absl::Status status) override { connected = status; }
  void OnReply(RedisReply) override { ++replies; }
  void OnLost(absl::Status why) override { lost = why; }
  absl::Status connected = absl::UnknownError("no OnConnect");
  absl::Status lost = absl::OkStatus();
  int replies = 0;
};

TEST(WireConnectionTest, WritingToAPeerThatWentAwayRaisesNoSigpipe) {
  // The caller's thread, as an AsyncRedlock's: SIGPIPE neither blocked nor
  // ignored, so a write(2) to the closed socket would end this process.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ASSERT_EQ(sigaction(SIGPIPE, &dfl, nullptr), 0);
  sigset_t none;
  sigemptyset(&none);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &none, nullptr), 0);

  ClosingPeer peer;
  ASSERT_FALSE(peer.path().empty());
  event_base* base = event_base_new();
  ASSERT_NE(base, nullptr);
  MasterAddress address;
  address.transport = MasterAddress::Transport::kUnix;
  address.path = peer.path();
  Outcome outcome;
  auto connection = internal::OpenWireConnection(
      base, address, nullptr, &outcome, internal::ConnectionMode::kReplies);
  ASSERT_TRUE(connection.ok()) << connection.status();
  for (int i = 0; i < 20 && !outcome.connected.ok(); ++i) {
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
  }
  ASSERT_TRUE(outcome.connected.ok()) << outcome.connected;
  ASSERT_TRUE(peer.AcceptAndClose());
  // Queued in this turn; the send at its end meets the closed peer (EPIPE)
  // before the read event sees the close.
  ASSERT_TRUE((*connection)->Send({"PING"}));
  for (int i = 0; i < 20 && outcome.lost.ok(); ++i) {
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
  }
  EXPECT_FALSE(outcome.lost.ok());
  EXPECT_EQ(outcome.replies, 0);
  connection->reset();
  event_base_free(base);
}

TEST(WireConnectionTest, AMissingUnixSocketFailsAtOnceSayingWhy) {
  event_base* base = event_base_new();
  MasterAddress address;
  address.transport = MasterAddress::Transport::kUnix;
  address.path = "/nonexistent/redlock/redis.sock";
  Outcome outcome;
  auto connection = internal::OpenWireConnection(
      base, address, nullptr, &outcome, internal::ConnectionMode::kReplies);
  EXPECT_EQ(connection.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(connection.status().message(),
              HasSubstr("No such file or directory"));
  event_base_free(base);
}

TEST(WireConnectionTest, ATlsMasterWithoutATlsContextIsRefused) {
  event_base* base = event_base_new();
  MasterAddress address;
  address.transport = MasterAddress::Transport::kTls;
  address.host = "127.0.0.1";
  address.port = 1;
  Outcome outcome;
  auto connection = internal::OpenWireConnection(
      base, address, nullptr, &outcome, internal::ConnectionMode::kReplies);
  EXPECT_EQ(connection.status().code(), absl::StatusCode::kFailedPrecondition);
  event_base_free(base);
}

}  // namespace
}  // namespace redlock
