// Copyright 2026 The redlock Authors.
//
// The quorum decision alone, with fake masters answered by the test and a
// fake clock: early success, early failure, timeouts, late replies, validity
// and the clean-up after a lost round.

#include "src/engine/quorum_round.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/validity.h"

namespace redlock::internal {
namespace {

class FakeClock : public Clock {
 public:
  MonotonicTime Now() override { return now_; }
  void Advance(absl::Duration d) { now_ += ToChrono(d); }

 private:
  MonotonicTime now_{std::chrono::seconds(1000)};
};

// Records what it is sent; the test answers.
class FakeMaster : public MasterLink {
 public:
  explicit FakeMaster(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  void Send(const Command& command, ReplyCallback done) override {
    sent.push_back(command);
    callbacks.push_back(std::move(done));
  }
  // Answers the request at `index` (in sending order).
  void Answer(size_t index, absl::StatusOr<RedisReply> reply) {
    ASSERT_LT(index, callbacks.size());
    auto done = std::move(callbacks[index]);
    ASSERT_TRUE(done) << "answered twice";
    done(std::move(reply));
  }

  std::vector<Command> sent;
  std::vector<ReplyCallback> callbacks;

 private:
  std::string name_;
};

const RedisReply kOk = RedisReply::Status("OK");
const RedisReply kNil = RedisReply::Nil();

class QuorumRoundTest : public ::testing::Test {
 protected:
  void MakeMasters(int n) {
    for (int i = 0; i < n; ++i) {
      fakes_.push_back(std::make_unique<FakeMaster>("m" + std::to_string(i)));
      links_.push_back(fakes_.back().get());
    }
  }

  RoundConfig AcquireConfig(int quorum) {
    RoundConfig config;
    config.command = AcquireCommand("k", "tok", absl::Seconds(10));
    config.map_reply = &AcquireVote;
    config.quorum = quorum;
    config.check_validity = true;
    config.ttl = absl::Seconds(10);
    config.drift_factor = 0.01;
    config.cleanup_on_loss = ReleaseCommand("k", "tok");
    return config;
  }

  RoundConfig ReleaseConfig(int quorum, RoundConfig::DecideWhen when) {
    RoundConfig config;
    config.command = ReleaseCommand("k", "tok");
    config.map_reply = &ScriptVote;
    config.quorum = quorum;
    config.decide_when = when;
    return config;
  }

  std::shared_ptr<QuorumRound> Start(RoundConfig config) {
    return QuorumRound::Start(links_, std::move(config), &clock_,
                              [this](RoundResult r) {
                                ++calls_;
                                result_ = std::move(r);
                              });
  }

  FakeClock clock_;
  std::vector<std::unique_ptr<FakeMaster>> fakes_;
  std::vector<MasterLink*> links_;
  int calls_ = 0;
  std::optional<RoundResult> result_;
};

TEST_F(QuorumRoundTest, SendsToEveryMasterBeforeStartReturns) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  for (auto& fake : fakes_) {
    ASSERT_EQ(fake->sent.size(), 1u);
    EXPECT_EQ(fake->sent[0].args[0], "SET");
  }
  EXPECT_EQ(calls_, 0);
}

TEST_F(QuorumRoundTest, WinsAsSoonAsQuorumGrantedWithoutWaitingForStragglers) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  fakes_[0]->Answer(0, kOk);
  fakes_[3]->Answer(0, kOk);
  EXPECT_EQ(calls_, 0);
  fakes_[4]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  EXPECT_TRUE(result_->status.ok()) << result_->status;
  EXPECT_EQ(result_->granted, 3);
  EXPECT_EQ(result_->pending, 2);
  EXPECT_EQ(result_->votes[1].kind, MasterVote::Kind::kPending);
  EXPECT_EQ(result_->votes[4].kind, MasterVote::Kind::kGranted);
  // A won round cleans nothing up.
  for (auto& fake : fakes_) EXPECT_EQ(fake->sent.size(), 1u);
}

TEST_F(QuorumRoundTest, LosesAsSoonAsQuorumIsImpossible) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  fakes_[0]->Answer(0, kNil);
  fakes_[1]->Answer(0, kNil);
  EXPECT_EQ(calls_, 0);
  fakes_[2]->Answer(0, kNil);
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(result_->denied, 3);
  EXPECT_EQ(result_->pending, 2);
}

TEST_F(QuorumRoundTest, FailuresAloneMakeTheLossUnavailable) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  fakes_[0]->Answer(0, absl::UnavailableError("Connection refused"));
  fakes_[1]->Answer(0, absl::DeadlineExceededError("no reply within 50ms"));
  fakes_[2]->Answer(0, RedisReply::Error("OOM command not allowed"));
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result_->failed, 3);
  EXPECT_EQ(result_->votes[1].error.code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(result_->votes[2].error.code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(QuorumRoundTest, DeniedAndFailedTogetherMakeTheLossAborted) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  fakes_[0]->Answer(0, kNil);
  fakes_[1]->Answer(0, kNil);
  fakes_[2]->Answer(0, absl::DeadlineExceededError("timeout"));
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kAborted);
}

TEST_F(QuorumRoundTest, ATimeoutCountsAsAFailedVote) {
  MakeMasters(3);
  auto round = Start(AcquireConfig(2));
  fakes_[0]->Answer(0, kOk);
  fakes_[1]->Answer(0, absl::DeadlineExceededError("no reply within 50ms"));
  EXPECT_EQ(calls_, 0);
  fakes_[2]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  EXPECT_TRUE(result_->status.ok());
  EXPECT_EQ(result_->failed, 1);
}

TEST_F(QuorumRoundTest, LateRepliesAfterTheDecisionChangeNothing) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  for (int i = 0; i < 3; ++i) fakes_[i]->Answer(0, kNil);
  ASSERT_EQ(calls_, 1);
  fakes_[3]->Answer(0, kOk);
  fakes_[4]->Answer(0, kOk);
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(result_->granted, 0);
}

TEST_F(QuorumRoundTest, ALostRoundSendsTheReleaseToEveryMasterEvenPending) {
  MakeMasters(5);
  auto round = Start(AcquireConfig(3));
  fakes_[0]->Answer(0, kOk);  // We hold this one: it must be released.
  fakes_[1]->Answer(0, kNil);
  fakes_[2]->Answer(0, kNil);
  fakes_[3]->Answer(0, kNil);
  ASSERT_EQ(calls_, 1);
  for (auto& fake : fakes_) {
    ASSERT_EQ(fake->sent.size(), 2u) << fake->name();
    EXPECT_EQ(fake->sent[1].script, &ReleaseScript());
    EXPECT_EQ(fake->sent[1].args[1], "tok");
  }
  // Master 4 still has its SET pending: the release went out behind it.
  EXPECT_TRUE(fakes_[4]->callbacks[0]);
}

TEST_F(QuorumRoundTest, ValidityIsMeasuredFromTheStartOfTheRound) {
  MakeMasters(3);
  const MonotonicTime start = clock_.Now();
  auto round = Start(AcquireConfig(2));
  clock_.Advance(absl::Milliseconds(30));
  fakes_[0]->Answer(0, kOk);
  clock_.Advance(absl::Milliseconds(40));
  fakes_[2]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  ASSERT_TRUE(result_->status.ok());
  EXPECT_EQ(result_->start, start);
  EXPECT_EQ(result_->decided_at, start + std::chrono::milliseconds(70));
  // ttl - drift from the start: the 70ms the round took are already spent.
  const auto ttl_minus_drift =
      ToChrono(absl::Seconds(10) - absl::Milliseconds(102));
  EXPECT_EQ(result_->valid_until, start + ttl_minus_drift);
  EXPECT_NE(result_->valid_until, result_->decided_at + ttl_minus_drift);
  EXPECT_EQ(Remaining(result_->valid_until, result_->decided_at),
            absl::Seconds(10) - absl::Milliseconds(102 + 70));
  EXPECT_EQ(result_->votes[0].latency, absl::Milliseconds(30));
  EXPECT_EQ(result_->votes[2].latency, absl::Milliseconds(70));
}

TEST_F(QuorumRoundTest, QuorumThatComesTooLateIsDeadlineExceededAndCleansUp) {
  MakeMasters(3);
  auto round = Start(AcquireConfig(2));
  fakes_[0]->Answer(0, kOk);
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(102));
  fakes_[1]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(result_->status.message().find("validity"), std::string::npos);
  for (auto& fake : fakes_) EXPECT_EQ(fake->sent.size(), 2u);
}

TEST_F(QuorumRoundTest, MinValidityRaisesTheBar) {
  MakeMasters(1);
  RoundConfig config = AcquireConfig(1);
  config.min_validity = absl::Seconds(5);
  auto round = Start(std::move(config));
  clock_.Advance(absl::Seconds(5));
  fakes_[0]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  // 10s - 102ms - 5s elapsed = 4.898s, not more than 5s.
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(QuorumRoundTest, UnanimousQuorumLosesOnTheFirstFailure) {
  MakeMasters(3);
  auto round = Start(AcquireConfig(3));
  fakes_[1]->Answer(0, absl::UnavailableError("down"));
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kUnavailable);
}

TEST_F(QuorumRoundTest, WaitForAllDecidesOnlyWhenEveryMasterAnswered) {
  MakeMasters(3);
  auto round = Start(ReleaseConfig(1, RoundConfig::DecideWhen::kAllVoted));
  fakes_[0]->Answer(0, RedisReply::Integer(1));
  fakes_[1]->Answer(0, RedisReply::Integer(0));
  EXPECT_EQ(calls_, 0);
  fakes_[2]->Answer(0, absl::UnavailableError("down"));
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->granted, 1);
  EXPECT_EQ(result_->denied, 1);
  EXPECT_EQ(result_->failed, 1);
}

TEST_F(QuorumRoundTest, AReleaseIsDecidedOnceAQuorumNoLongerCarriesTheToken) {
  MakeMasters(5);
  auto round = Start(ReleaseConfig(3, RoundConfig::DecideWhen::kQuorumCleared));
  fakes_[0]->Answer(0, RedisReply::Integer(1));  // Deleted.
  fakes_[1]->Answer(0, absl::UnavailableError("down"));
  fakes_[2]->Answer(0, RedisReply::Integer(0));  // Already gone.
  EXPECT_EQ(calls_, 0) << "decided with two of three";
  fakes_[3]->Answer(0, RedisReply::Integer(1));
  // Master 4 has not answered: not waited for.
  ASSERT_EQ(calls_, 1);
  EXPECT_TRUE(result_->status.ok()) << result_->status;
  EXPECT_EQ(result_->granted, 2);
  EXPECT_EQ(result_->denied, 1);
  EXPECT_EQ(result_->failed, 1);
  EXPECT_EQ(result_->pending, 1);
  EXPECT_EQ(result_->votes[4].kind, MasterVote::Kind::kPending);
}

TEST_F(QuorumRoundTest, AReleaseFailsAsSoonAsAQuorumCanNoLongerConfirmIt) {
  MakeMasters(5);
  auto round = Start(ReleaseConfig(3, RoundConfig::DecideWhen::kQuorumCleared));
  fakes_[0]->Answer(0, RedisReply::Integer(1));
  fakes_[1]->Answer(0, absl::UnavailableError("down"));
  fakes_[2]->Answer(0, absl::DeadlineExceededError("no reply"));
  EXPECT_EQ(calls_, 0);
  fakes_[3]->Answer(0, absl::UnavailableError("down"));
  ASSERT_EQ(calls_, 1);
  EXPECT_EQ(result_->status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result_->pending, 1);
}

TEST_F(QuorumRoundTest, OneServerUnderTwoAddressesCastsOneGrant) {
  // Masters 1 and 2 are one server: whichever grants second is a failed vote,
  // whatever order their addresses come in the list.
  MakeMasters(3);
  RoundConfig config = AcquireConfig(2);
  config.failure_domain = [](int master) -> absl::string_view {
    return master == 2 ? "server-b" : "server-a";
  };
  auto round = Start(std::move(config));
  fakes_[1]->Answer(0, kOk);
  fakes_[0]->Answer(0, kOk);
  EXPECT_EQ(calls_, 0) << "two grants from one server made a quorum";
  fakes_[2]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  EXPECT_TRUE(result_->status.ok()) << result_->status;
  EXPECT_EQ(result_->granted, 2);
  EXPECT_EQ(result_->failed, 1);
  EXPECT_EQ(result_->votes[0].kind, MasterVote::Kind::kFailed);
  EXPECT_NE(result_->votes[0].error.message().find("same server as m1"),
            std::string::npos)
      << result_->votes[0].error;
}

TEST_F(QuorumRoundTest, UnknownFailureDomainsAreNotDuplicatesOfEachOther) {
  MakeMasters(3);
  RoundConfig config = AcquireConfig(2);
  config.failure_domain = [](int) { return absl::string_view(); };
  auto round = Start(std::move(config));
  fakes_[0]->Answer(0, kOk);
  fakes_[1]->Answer(0, kOk);
  ASSERT_EQ(calls_, 1);
  EXPECT_TRUE(result_->status.ok()) << result_->status;
}

TEST_F(QuorumRoundTest, CancelledRoundNeverCallsBackNorCleansUp) {
  MakeMasters(3);
  auto round = Start(AcquireConfig(2));
  round->Cancel();
  fakes_[0]->Answer(0, kNil);
  fakes_[1]->Answer(0, kNil);
  EXPECT_EQ(calls_, 0);
  for (auto& fake : fakes_) EXPECT_EQ(fake->sent.size(), 1u);
}

TEST_F(QuorumRoundTest, FailureMessageNamesEveryMasterAndItsVote) {
  MakeMasters(3);
  auto round = Start(AcquireConfig(2));
  fakes_[0]->Answer(0, kNil);
  fakes_[1]->Answer(0, absl::UnavailableError("Connection refused"));
  ASSERT_EQ(calls_, 1);
  const std::string message(result_->status.message());
  EXPECT_NE(message.find("m0 denied"), std::string::npos) << message;
  EXPECT_NE(message.find("m1 failed"), std::string::npos) << message;
  EXPECT_NE(message.find("Connection refused"), std::string::npos) << message;
  EXPECT_NE(message.find("m2 no reply yet"), std::string::npos) << message;
  EXPECT_NE(message.find("quorum 2 of 3"), std::string::npos) << message;
}

TEST(VoteTallyTest, ASecondVoteFromTheSameMasterIsIgnored) {
  VoteTally tally(3, 2);
  EXPECT_TRUE(tally.Record(0, Vote::kGranted));
  EXPECT_FALSE(tally.Record(0, Vote::kGranted));
  EXPECT_FALSE(tally.QuorumReached());
  EXPECT_EQ(tally.granted(), 1);
  EXPECT_EQ(tally.pending(), 2);
}

TEST(VoteTallyTest, OutOfRangeMasterIsIgnored) {
  VoteTally tally(3, 2);
  EXPECT_FALSE(tally.Record(3, Vote::kGranted));
  EXPECT_FALSE(tally.Record(-1, Vote::kGranted));
  EXPECT_EQ(tally.pending(), 3);
}

TEST(VoteTallyTest, MajorityOfFiveToleratesTwoFailures) {
  VoteTally tally(5, 3);
  tally.Record(0, absl::UnavailableError("down"));
  tally.Record(1, absl::UnavailableError("down"));
  EXPECT_FALSE(tally.QuorumImpossible());
  tally.Record(2, absl::UnavailableError("down"));
  EXPECT_TRUE(tally.QuorumImpossible());
  EXPECT_EQ(tally.LossCode(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace redlock::internal
