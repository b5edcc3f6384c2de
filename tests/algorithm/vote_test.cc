// Copyright 2026 The redlock Authors.
//
// What each kind of Redis reply means as a vote.

#include "src/algorithm/vote.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::internal {
namespace {

TEST(AcquireVoteTest, OkStatusIsGranted) {
  EXPECT_EQ(AcquireVote(RedisReply::Status("OK")).value(), Vote::kGranted);
}

TEST(AcquireVoteTest, NilMeansHeldByAnotherOwner) {
  EXPECT_EQ(AcquireVote(RedisReply::Nil()).value(), Vote::kDenied);
}

TEST(AcquireVoteTest, OomIsAFailedVoteNamingTheReason) {
  absl::StatusOr<Vote> vote = AcquireVote(RedisReply::Error(
      "OOM command not allowed when used memory > 'maxmemory'."));
  ASSERT_FALSE(vote.ok());
  EXPECT_EQ(vote.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(vote.status().message().find("OOM"), absl::string_view::npos);
}

TEST(AcquireVoteTest, ReadonlyReplicaIsAFailedVote) {
  absl::StatusOr<Vote> vote = AcquireVote(RedisReply::Error(
      "READONLY You can't write against a read only replica."));
  ASSERT_FALSE(vote.ok());
  EXPECT_EQ(vote.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(vote.status().message().find("READONLY"), absl::string_view::npos);
}

TEST(AcquireVoteTest, NoauthIsUnauthenticated) {
  absl::StatusOr<Vote> vote =
      AcquireVote(RedisReply::Error("NOAUTH Authentication required."));
  EXPECT_EQ(vote.status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(AcquireVoteTest, UnexpectedStatusOrTypeIsAFailedVote) {
  EXPECT_EQ(AcquireVote(RedisReply::Status("QUEUED")).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(AcquireVote(RedisReply::Integer(1)).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(AcquireVote(RedisReply::String("OK")).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(AcquireVote(RedisReply::Array({})).status().code(),
            absl::StatusCode::kInternal);
}

TEST(ScriptVoteTest, OneIsGrantedZeroIsDenied) {
  EXPECT_EQ(ScriptVote(RedisReply::Integer(1)).value(), Vote::kGranted);
  EXPECT_EQ(ScriptVote(RedisReply::Integer(0)).value(), Vote::kDenied);
}

TEST(ScriptVoteTest, OtherIntegersAndTypesAreFailedVotes) {
  EXPECT_FALSE(ScriptVote(RedisReply::Integer(2)).ok());
  EXPECT_FALSE(ScriptVote(RedisReply::Integer(-1)).ok());
  EXPECT_FALSE(ScriptVote(RedisReply::Nil()).ok());
  EXPECT_FALSE(ScriptVote(RedisReply::Status("OK")).ok());
}

TEST(BatchExtendReplyTest, EachEntryIsJudgedAloneAsASingleExtension) {
  absl::StatusOr<std::vector<RedisReply>> split = SplitBatchExtendReply(
      RedisReply::Array({RedisReply::Integer(1), RedisReply::Integer(0),
                         RedisReply::Integer(-1), RedisReply::Integer(7),
                         RedisReply::String("1"), RedisReply::Integer(1)}),
      6);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 6u);
  EXPECT_EQ(*ScriptVote((*split)[0]), Vote::kGranted);
  EXPECT_EQ(*ScriptVote((*split)[1]), Vote::kDenied);
  // The permit set's other limit: a failed vote, as the single script's
  // SEMLIMIT error reply is.
  EXPECT_FALSE(ScriptVote((*split)[2]).ok());
  EXPECT_NE(ScriptVote((*split)[2]).status().message().find("SEMLIMIT"),
            absl::string_view::npos);
  // A bad entry fails that lock alone; its neighbours keep their votes.
  EXPECT_FALSE(ScriptVote((*split)[3]).ok());
  EXPECT_FALSE(ScriptVote((*split)[4]).ok());
  EXPECT_EQ(*ScriptVote((*split)[5]), Vote::kGranted);
}

TEST(BatchExtendReplyTest, AWholeReplyThatIsNoAnswerFailsEveryLockInIt) {
  // Too few or too many entries, not an array, an error reply: no entry
  // can be trusted to be the lock's.
  EXPECT_FALSE(
      SplitBatchExtendReply(RedisReply::Array({RedisReply::Integer(1)}), 2)
          .ok());
  EXPECT_FALSE(
      SplitBatchExtendReply(
          RedisReply::Array({RedisReply::Integer(1), RedisReply::Integer(1),
                             RedisReply::Integer(1)}),
          2)
          .ok());
  EXPECT_FALSE(SplitBatchExtendReply(RedisReply::Integer(1), 1).ok());
  absl::StatusOr<std::vector<RedisReply>> oom =
      SplitBatchExtendReply(RedisReply::Error("OOM command not allowed"), 3);
  EXPECT_EQ(oom.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ScriptVoteTest, ErrorReplyIsAFailedVote) {
  absl::StatusOr<Vote> vote =
      ScriptVote(RedisReply::Error("BUSY Redis is busy running a script."));
  EXPECT_EQ(vote.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ErrorReplyStatusTest, MapsErrorCodesByPrefix) {
  EXPECT_EQ(ErrorReplyStatus("WRONGPASS invalid username-password pair").code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(ErrorReplyStatus("NOPERM this user has no permissions").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrorReplyStatus("LOADING Redis is loading").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrorReplyStatus("NOSCRIPT No matching script").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrorReplyStatus("ERR unknown command").code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(ErrorReplyStatus("").code(), absl::StatusCode::kInternal);
}

TEST(ErrorReplyStatusTest, KeepsTheServerText) {
  EXPECT_EQ(ErrorReplyStatus("OOM command not allowed").message(),
            "OOM command not allowed");
}

TEST(IsNoScriptTest, OnlyTheNoscriptErrorCounts) {
  EXPECT_TRUE(IsNoScript(
      RedisReply::Error("NOSCRIPT No matching script. Please use EVAL.")));
  EXPECT_FALSE(IsNoScript(RedisReply::Error("ERR NOSCRIPT")));
  EXPECT_FALSE(IsNoScript(RedisReply::String("NOSCRIPT")));
}

}  // namespace
}  // namespace redlock::internal

namespace redlock::internal {
namespace {

RedisReply FencedReply(int64_t set, std::string counter, std::string marker) {
  return RedisReply::Array({RedisReply::Integer(set),
                            RedisReply::String(std::move(counter)),
                            RedisReply::String(std::move(marker))});
}

TEST(FencedAcquireVoteTest, FirstElementDecidesTheVote) {
  EXPECT_EQ(FencedAcquireVote(FencedReply(1, "7", "trusted")).value(),
            Vote::kGranted);
  EXPECT_EQ(FencedAcquireVote(FencedReply(0, "7", "trusted")).value(),
            Vote::kDenied);
  EXPECT_FALSE(FencedAcquireVote(FencedReply(2, "", "")).ok());
  EXPECT_FALSE(FencedAcquireVote(RedisReply::Array({})).ok());
  EXPECT_EQ(FencedAcquireVote(RedisReply::Error("OOM no")).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(SemaphoreReplyTest, TheFreeSlotMapNamesEachFreeSlot) {
  using R = RedisReply;
  absl::StatusOr<SemaphoreReply> granted = ParseSemaphoreReply(
      R::Array({R::Integer(1), R::String("1001")}), /*limit=*/4);
  ASSERT_TRUE(granted.ok()) << granted.status();
  EXPECT_EQ(granted->kind, SemaphoreReply::Kind::kGranted);
  EXPECT_EQ(granted->free_slots, (std::vector<int>{0, 3}));
  absl::StatusOr<SemaphoreReply> denied = ParseSemaphoreReply(
      R::Array({R::Integer(0), R::String("0000")}), /*limit=*/4);
  ASSERT_TRUE(denied.ok()) << denied.status();
  EXPECT_EQ(denied->kind, SemaphoreReply::Kind::kDenied);
  EXPECT_TRUE(denied->free_slots.empty());
  // The largest limit answers in one short string.
  const std::string all_free(1024, '1');
  absl::StatusOr<SemaphoreReply> wide =
      ParseSemaphoreReply(R::Array({R::Integer(0), R::String(all_free)}), 1024);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->free_slots.size(), 1024u);
  EXPECT_EQ(wide->free_slots.back(), 1023);
  EXPECT_EQ(
      SemaphoreAcquireVote(R::Array({R::Integer(1), R::String("10")})).value(),
      Vote::kGranted);
  EXPECT_EQ(
      SemaphoreAcquireVote(R::Array({R::Integer(0), R::String("10")})).value(),
      Vote::kDenied);
}

TEST(SemaphoreReplyTest, AMalformedMapIsAFailedVoteNeverAGrant) {
  using R = RedisReply;
  for (const RedisReply& bad : std::vector<RedisReply>{
           R::Array({R::Integer(1), R::String("10")}),     // Too short.
           R::Array({R::Integer(1), R::String("10010")}),  // Too long.
           R::Array({R::Integer(1), R::String("1x01")}),   // Not 0 or 1.
           R::Array({R::Integer(1), R::Integer(3)}),       // The old list.
           R::Array({R::Integer(1), R::String("1001"), R::String("1")}),
           R::Array({R::Integer(1)}),
           R::Array({R::Integer(2), R::String("1001")})}) {
    EXPECT_FALSE(ParseSemaphoreReply(bad, /*limit=*/4).ok());
  }
  EXPECT_FALSE(
      SemaphoreAcquireVote(R::Array({R::Integer(1), R::String("1x")})).ok());
  EXPECT_FALSE(
      SemaphoreAcquireVote(R::Array({R::Integer(1), R::Integer(0)})).ok());
  absl::StatusOr<SemaphoreReply> mismatch = ParseSemaphoreReply(
      R::Array({R::Integer(-1), R::String("3")}), /*limit=*/4);
  ASSERT_TRUE(mismatch.ok());
  EXPECT_EQ(mismatch->kind, SemaphoreReply::Kind::kLimitMismatch);
  EXPECT_FALSE(
      SemaphoreAcquireVote(R::Array({R::Integer(-1), R::String("3")})).ok());
}

TEST(ParseFenceReadTest, ReadsCounterAndMarker) {
  absl::StatusOr<FenceRead> read =
      ParseFenceRead(FencedReply(1, "41", "reborn"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->counter_present);
  EXPECT_EQ(read->counter, 41u);
  EXPECT_EQ(read->marker, "reborn");
}

TEST(ParseFenceReadTest, AnEmptyCounterIsAbsentNotZero) {
  absl::StatusOr<FenceRead> read = ParseFenceRead(FencedReply(0, "", ""));
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->counter_present);
  EXPECT_TRUE(read->marker.empty());
}

TEST(ParseFenceReadTest, ACounterThatIsNotANumberIsAnError) {
  EXPECT_FALSE(ParseFenceRead(FencedReply(1, "-3", "trusted")).ok());
  EXPECT_FALSE(ParseFenceRead(FencedReply(1, "12abc", "trusted")).ok());
  // Only INCR's own spelling: no sign, no spaces.
  EXPECT_FALSE(ParseFenceRead(FencedReply(1, "+42", "trusted")).ok());
  EXPECT_FALSE(ParseFenceRead(FencedReply(1, " 42", "trusted")).ok());
  EXPECT_FALSE(ParseFenceRead(FencedReply(1, "42\n", "trusted")).ok());
}

TEST(ScriptVoteTest, AFenceWriteBackIsGrantedOnlyWhenItRaisedTheCounter) {
  // The fence write script answers like the token-checked ones: 1 raised to
  // our token; 0 the counter was already at or above it (another acquisition
  // issued that token, so ours must not count).
  EXPECT_EQ(ScriptVote(RedisReply::Integer(1)).value(), Vote::kGranted);
  EXPECT_EQ(ScriptVote(RedisReply::Integer(0)).value(), Vote::kDenied);
  EXPECT_FALSE(ScriptVote(RedisReply::Integer(12)).ok());
  EXPECT_FALSE(ScriptVote(RedisReply::Nil()).ok());
}

// CountTrustedFenceReads on five masters: the judge and the domains are
// given per test; every master is judged and its own server unless said.
class CountTrustedFenceReadsTest : public ::testing::Test {
 protected:
  int Count(uint64_t* highest = nullptr, std::string* untrusted = nullptr) {
    return CountTrustedFenceReads(
        replies_,
        [this](int i) {
          return judged_[i] ? absl::OkStatus()
                            : absl::FailedPreconditionError("not judged");
        },
        [this](int i) { return absl::string_view(domains_[i]); }, highest,
        untrusted);
  }

  std::vector<std::optional<RedisReply>> replies_ =
      std::vector<std::optional<RedisReply>>(5);
  std::vector<bool> judged_ = std::vector<bool>(5, true);
  std::vector<std::string> domains_ = {"a", "b", "c", "d", "e"};
};

TEST_F(CountTrustedFenceReadsTest, TrustedMarkersCountAndTheHighestIsKept) {
  replies_[0] = FencedReply(1, "7", "trusted");
  replies_[1] = FencedReply(0, "", "trusted");  // Never written: 0.
  replies_[2] = FencedReply(1, "9", "trusted");
  uint64_t highest = 0;
  EXPECT_EQ(Count(&highest), 3);
  EXPECT_EQ(highest, 9u);
}

TEST_F(CountTrustedFenceReadsTest, ARebornMasterCountsOnlyWithACounter) {
  replies_[0] = FencedReply(1, "", "reborn");
  replies_[1] = FencedReply(1, "4", "reborn");
  replies_[2] = FencedReply(1, "4", "");
  std::string untrusted;
  EXPECT_EQ(Count(nullptr, &untrusted), 1);
  EXPECT_EQ(untrusted, "master 1 (reborn, no counter), master 3 (no marker)");
}

TEST_F(CountTrustedFenceReadsTest, AMasterNotJudgedDoesNotCountWhatItHolds) {
  // A young reborn master may hold a stale counter below a token it forgot.
  replies_[0] = FencedReply(1, "3", "reborn");
  replies_[1] = FencedReply(1, "10", "trusted");
  judged_[0] = false;
  uint64_t highest = 0;
  EXPECT_EQ(Count(&highest), 1);
  EXPECT_EQ(highest, 10u);
}

TEST_F(CountTrustedFenceReadsTest, OneServerUnderTwoAddressesReadsOnce) {
  replies_[0] = FencedReply(1, "5", "trusted");
  replies_[1] = FencedReply(0, "5", "trusted");
  replies_[2] = FencedReply(1, "5", "trusted");
  domains_[1] = "a";  // Master 2 is master 1 again.
  std::string untrusted;
  EXPECT_EQ(Count(nullptr, &untrusted), 2);
  EXPECT_EQ(untrusted, "master 2 (same server as master 1)");
  // An unknown domain is not a duplicate of another unknown one.
  domains_ = {"", "", "", "", ""};
  EXPECT_EQ(Count(), 3);
}

}  // namespace
}  // namespace redlock::internal
