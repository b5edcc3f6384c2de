// Copyright 2026 The redlock Authors.
//
// A command as RESP text (src/algorithm/redis_reply.h: AppendRespCommand,
// SplitRespCommand) and a script call encoded once for every master
// (src/algorithm/scripts.h: EncodeCall, EncodedBatchExtendCommand).

#include "src/algorithm/redis_reply.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/algorithm/scripts.h"

namespace redlock {
namespace {

using internal::RedisReply;

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

}  // namespace
}  // namespace redlock
