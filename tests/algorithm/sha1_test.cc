// Copyright 2026 The redlock Authors.

#include "src/algorithm/sha1.h"

#include <string>

#include "gtest/gtest.h"

namespace redlock::internal {
namespace {

// FIPS 180-4 example messages (NIST "SHA1.pdf" and the long-message vector).
TEST(Sha1HexTest, HashesEmptyString) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

TEST(Sha1HexTest, HashesAbc) {
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(Sha1HexTest, Hashes448BitMessageThatNeedsTwoPaddingBlocks) {
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

TEST(Sha1HexTest, Hashes896BitMessage) {
  EXPECT_EQ(Sha1Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "a49b2446a02c645bf419f995b67091253a04a259");
}

TEST(Sha1HexTest, HashesOneMillionLetterA) {
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

// "abc...zabc..." cut to `size` bytes.
std::string Alphabet(size_t size) {
  std::string text;
  for (size_t i = 0; i < size; ++i) text.push_back('a' + i % 26);
  return text;
}

// Expected values from coreutils sha1sum, e.g. for 55 bytes:
//   yes abcdefghijklmnopqrstuvwxyz | tr -d '\n' | head -c 55 | sha1sum
// 55 is the longest tail that pads within one block, 56 the shortest that
// needs a second; 63, 64 and 65 straddle a whole block; 119 and 120 repeat
// the one/two-block boundary after a full block.
TEST(Sha1HexTest, MatchesSha1sumAcrossPaddingBoundaries) {
  struct Case {
    size_t size;
    const char* hex;
  };
  for (const Case& c : {
           Case{55, "a617d006d1ca12671785098a19a87fe58443bde9"},
           Case{56, "4ad5bb7ae3c4024768d364b77c52128ea3cffebe"},
           Case{63, "fc8a5ab77259625085ead3ec96515b3b8d933fad"},
           Case{64, "93249d4c2f8903ebf41ac358473148ae6ddd7042"},
           Case{65, "cf2a63cc308225cf07b498d2309a01dd0df52f67"},
           Case{119, "edd0f1133d0e4ca5f3e98bb7e0295f31d20d2cdb"},
           Case{120, "23a58eee587aa1f50d19a969ab36a3fe3e88c393"},
       }) {
    EXPECT_EQ(Sha1Hex(Alphabet(c.size)), c.hex) << "size " << c.size;
  }
}

// Every byte value once, NUL and bytes above 0x7f included: catches sign
// extension of `char` and strlen-style truncation.
TEST(Sha1HexTest, HashesEveryByteValue) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  // printf every \xNN for NN in 00..ff | sha1sum
  EXPECT_EQ(Sha1Hex(bytes), "4916d6bdb7f78e6803698cab32d1586ea457dfc8");
}

}  // namespace
}  // namespace redlock::internal
