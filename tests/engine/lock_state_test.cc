// Copyright 2026 The redlock Authors.
//
// LockState's lean storage (issue 25, target 4): a lock handle's accessors
// and votes() return exactly what was stored, packed or not.

#include "src/engine/lock_state.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/lock.h"
#include "src/algorithm/token.h"

namespace redlock::internal {
namespace {

MasterVote Vote(std::string master, MasterVote::Kind kind,
                absl::Duration latency, absl::Status error = absl::OkStatus()) {
  MasterVote v;
  v.master = std::move(master);
  v.kind = kind;
  v.latency = latency;
  v.error = std::move(error);
  return v;
}

void ExpectSame(const std::vector<MasterVote>& got,
                const std::vector<MasterVote>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].master, want[i].master) << i;
    EXPECT_EQ(got[i].kind, want[i].kind) << i;
    EXPECT_EQ(got[i].error, want[i].error) << i;
    EXPECT_EQ(got[i].latency, want[i].latency) << i;
  }
}

std::shared_ptr<LockState> StateWithNames() {
  auto state = std::make_shared<LockState>();
  auto* context = new LockContext();
  context->master_names = {"127.0.0.1:7001", "127.0.0.1:7002",
                           "a-rather-long-host-name.example:7003"};
  state->context = LockContextRef(context);
  state->SetNames({"r"}, {"redlock:r"});
  return state;
}

TEST(LockStateTest, VotesComeBackAsStoredInAndOutOfLinkOrder) {
  auto state = StateWithNames();
  const std::vector<MasterVote> votes = {
      Vote("127.0.0.1:7002", MasterVote::Kind::kDenied,
           absl::Nanoseconds(1234567)),
      Vote("127.0.0.1:7001", MasterVote::Kind::kGranted,
           absl::Microseconds(210)),
      Vote("a-rather-long-host-name.example:7003", MasterVote::Kind::kFailed,
           absl::Milliseconds(50),
           absl::DeadlineExceededError("no reply within 50ms")),
  };
  std::lock_guard<std::mutex> lock(state->mu());
  state->SetVotesLocked(votes);
  EXPECT_FALSE(state->VotesUnpackedLocked());     // Packed.
  EXPECT_TRUE(state->VoteErrorsSpilledLocked());  // One has an error.
  ExpectSame(state->VotesLocked(), votes);
  // An extension's votes replace them (the same storage, fewer votes).
  const std::vector<MasterVote> again = {
      Vote("127.0.0.1:7001", MasterVote::Kind::kPending, absl::ZeroDuration())};
  state->SetVotesLocked(again);
  EXPECT_EQ(state->rare, nullptr);  // None has one any more.
  ExpectSame(state->VotesLocked(), again);
  // Errors on every master, then on one of them: each kept with its vote.
  const std::vector<MasterVote> failing = {
      Vote("127.0.0.1:7001", MasterVote::Kind::kFailed, absl::Milliseconds(1),
           absl::UnavailableError("Connection refused")),
      Vote("127.0.0.1:7002", MasterVote::Kind::kFailed, absl::Milliseconds(2),
           absl::ResourceExhaustedError("OOM command not allowed")),
  };
  state->SetVotesLocked(failing);
  EXPECT_FALSE(state->VotesUnpackedLocked());
  ExpectSame(state->VotesLocked(), failing);
  const std::vector<MasterVote> one_failing = {
      Vote("127.0.0.1:7001", MasterVote::Kind::kGranted, absl::Microseconds(3)),
      Vote("127.0.0.1:7002", MasterVote::Kind::kGranted, absl::Microseconds(4)),
      Vote("a-rather-long-host-name.example:7003", MasterVote::Kind::kFailed,
           absl::Milliseconds(5), absl::UnavailableError("reset by peer")),
  };
  state->SetVotesLocked(one_failing);
  ExpectSame(state->VotesLocked(), one_failing);
}

TEST(LockStateTest, UpToFiveVotesInlineMoreOutOfLineAllAsGiven) {
  auto state = std::make_shared<LockState>();
  auto* context = new LockContext();
  for (int i = 0; i < 7; ++i) {
    context->master_names.push_back(absl::StrCat("127.0.0.1:70", i));
  }
  state->context = LockContextRef(context);
  auto votes_of = [](int n, bool with_error) {
    std::vector<MasterVote> votes;
    for (int i = 0; i < n; ++i) {
      votes.push_back(Vote(
          absl::StrCat("127.0.0.1:70", (i + 2) % n),
          i % 3 == 0 ? MasterVote::Kind::kDenied : MasterVote::Kind::kGranted,
          absl::Nanoseconds(1000003 * (i + 1))));
    }
    if (with_error && n > 0) {
      votes.back().kind = MasterVote::Kind::kFailed;
      votes.back().error = absl::UnavailableError("Connection refused");
    }
    return votes;
  };
  std::lock_guard<std::mutex> lock(state->mu());
  for (int n : {5, 7, 1, 6, 0, 7, 5}) {
    for (bool with_error : {false, true}) {
      const std::vector<MasterVote> votes = votes_of(n, with_error);
      state->SetVotesLocked(votes);
      ExpectSame(state->VotesLocked(), votes);
      EXPECT_FALSE(state->VotesUnpackedLocked()) << n;
      EXPECT_EQ(state->VotesOutOfLineLocked(), n > 5) << n;
      EXPECT_EQ(state->rare == nullptr, n <= 5 && (!with_error || n == 0)) << n;
    }
  }
}

TEST(LockStateTest, VotesThatDoNotPackAreKeptAsGiven) {
  auto state = StateWithNames();
  const std::vector<MasterVote> unknown_master = {
      Vote("127.0.0.1:7001", MasterVote::Kind::kGranted, absl::Microseconds(1)),
      Vote("10.0.0.9:6379", MasterVote::Kind::kGranted, absl::Microseconds(2)),
  };
  const std::vector<MasterVote> sub_nanosecond = {Vote(
      "127.0.0.1:7001", MasterVote::Kind::kGranted, absl::Nanoseconds(0.25))};
  std::lock_guard<std::mutex> lock(state->mu());
  state->SetVotesLocked(unknown_master);
  EXPECT_TRUE(state->VotesUnpackedLocked());
  ExpectSame(state->VotesLocked(), unknown_master);
  state->SetVotesLocked(sub_nanosecond);
  ExpectSame(state->VotesLocked(), sub_nanosecond);
  // A latency past what a packed vote holds (about 4.29 s), or negative.
  for (absl::Duration latency :
       {absl::Nanoseconds(4294967296), absl::Seconds(30), absl::Nanoseconds(-1),
        absl::InfiniteDuration()}) {
    const std::vector<MasterVote> slow = {
        Vote("127.0.0.1:7001", MasterVote::Kind::kFailed, latency,
             absl::DeadlineExceededError("no reply"))};
    state->SetVotesLocked(slow);
    EXPECT_TRUE(state->VotesUnpackedLocked()) << latency;
    ExpectSame(state->VotesLocked(), slow);
  }
  // The longest that packs.
  const std::vector<MasterVote> longest = {Vote("127.0.0.1:7001",
                                                MasterVote::Kind::kFailed,
                                                absl::Nanoseconds(4294967295))};
  state->SetVotesLocked(longest);
  EXPECT_FALSE(state->VotesUnpackedLocked());
  ExpectSame(state->VotesLocked(), longest);
  EXPECT_EQ(sizeof(LockState::PackedVote), 8u);
  // No names at all (a state made without an engine): kept as given.
  auto bare = std::make_shared<LockState>();
  std::lock_guard<std::mutex> bare_lock(bare->mu());
  bare->SetVotesLocked(unknown_master);
  ExpectSame(bare->VotesLocked(), unknown_master);
}

TEST(LockStateTest, AccessorsOfAPlainLockAPermitSetAndAReader) {
  auto plain = StateWithNames();
  EXPECT_EQ(plain->resource(), "r");
  EXPECT_EQ(plain->key(), "redlock:r");
  EXPECT_FALSE(plain->shared());
  EXPECT_TRUE(plain->limit_key().empty());
  EXPECT_EQ(plain->limit(), 0);
  EXPECT_TRUE(plain->slots().empty());
  EXPECT_TRUE(plain->reader_key().empty());
  EXPECT_EQ(plain->extra, nullptr);
  Lock handle(plain);
  EXPECT_EQ(&handle.resource(), &plain->names[0]);
  EXPECT_EQ(&handle.key(), &plain->names[1]);
  EXPECT_EQ(handle.resources(), (std::vector<std::string>{"r"}));
  EXPECT_EQ(handle.keys(), (std::vector<std::string>{"redlock:r"}));
  // One resource's name and key are kept inline, in the state itself.
  EXPECT_FALSE(plain->names.empty());
  EXPECT_GE(static_cast<const void*>(plain->names.data()),
            static_cast<const void*>(plain.get()));
  EXPECT_LT(static_cast<const void*>(plain->names.data()),
            static_cast<const void*>(plain.get() + 1));

  LockState permits;
  permits.SetNames({"pool"}, {"slot:1", "slot:3"});
  EXPECT_EQ(permits.resources(), (std::vector<std::string>{"pool"}));
  EXPECT_EQ(permits.keys(), (std::vector<std::string>{"slot:1", "slot:3"}));
  permits.MutableExtra().slots = {1, 3};
  permits.MutableExtra().limit_key = "pool:limit";
  permits.MutableExtra().limit = 4;
  EXPECT_EQ(permits.key(), "slot:1");
  EXPECT_EQ(permits.limit_key(), "pool:limit");
  EXPECT_EQ(permits.limit(), 4);
  EXPECT_EQ(permits.slots(), (std::vector<int>{1, 3}));
  EXPECT_FALSE(permits.shared());

  LockState reader;
  reader.MutableExtra().shared = true;
  reader.MutableExtra().reader_key = "rk";
  reader.MutableExtra().readers_key = "rsk";
  EXPECT_TRUE(reader.shared());
  EXPECT_EQ(reader.reader_key(), "rk");
  EXPECT_EQ(reader.readers_key(), "rsk");
  EXPECT_TRUE(reader.resource().empty());  // No resources: empty, no crash.
  EXPECT_TRUE(reader.key().empty());
  EXPECT_TRUE(reader.keys().empty());

  // Several resources, sorted, then their keys.
  LockState several;
  several.SetNames({"a", "b", "c"}, {"k:a", "k:b", "k:c"});
  EXPECT_EQ(several.resource(), "a");
  EXPECT_EQ(several.key(), "k:a");
  EXPECT_EQ(several.resources(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(several.keys(), (std::vector<std::string>{"k:a", "k:b", "k:c"}));

  EXPECT_TRUE(Lock().resource().empty());
  EXPECT_TRUE(Lock().key().empty());
  EXPECT_TRUE(Lock().votes().empty());
}

TEST(LockStateTest, AGeneratedTokenIsKeptAsItsBytesAndLockTokenIsOneString) {
  auto state = StateWithNames();
  const std::string token = "0123456789abcdef0fedcba987654321";
  state->SetToken(token);
  EXPECT_TRUE(state->token_packed);
  EXPECT_EQ(state->token().view(), token);
  EXPECT_EQ(state->token_bytes[0], 0x01);
  EXPECT_EQ(state->token_bytes[15], 0x21);
  EXPECT_EQ(state->token_string.load(), nullptr);  // No string made yet.
  Lock handle(state);
  const std::string& first = handle.token();
  EXPECT_EQ(first, token);
  EXPECT_EQ(&handle.token(), &first);  // Made once, then the same.
  EXPECT_EQ(state->token().view(), token);

  // Every generated token packs and comes back the same.
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<std::string> fresh = NewToken();
    ASSERT_TRUE(fresh.ok());
    LockState s;
    s.SetToken(*fresh);
    EXPECT_TRUE(s.token_packed) << *fresh;
    EXPECT_EQ(s.token().view(), *fresh);
    EXPECT_EQ(s.TokenString(), *fresh);
  }

  // Anything else an adopted lock may carry is kept as given, in the string
  // from the start: other lengths, upper case, other characters.
  for (const std::string& other :
       {std::string(100, 'x'), std::string("t1"), std::string(),
        std::string("0123456789ABCDEF0123456789abcdef"),
        std::string("0123456789abcdef0123456789abcdeg"),
        std::string("0123456789abcdef0123456789abcde"),
        std::string("0123456789abcdef0123456789abcdef0")}) {
    LockState adopted;
    adopted.SetToken(other);
    EXPECT_FALSE(adopted.token_packed) << other;
    EXPECT_EQ(adopted.token().view(), other);
    EXPECT_EQ(adopted.TokenString(), other);
    EXPECT_EQ(&adopted.TokenString(), adopted.token_string.load());
  }
  // A state whose token was never set: empty.
  LockState none;
  EXPECT_TRUE(none.token().view().empty());
  EXPECT_TRUE(none.TokenString().empty());
  EXPECT_TRUE(Lock().token().empty());
}

TEST(LockStateTest, TokenStringFromManyThreadsAtOnceIsOneString) {
  // Two threads, as many as this machine has cores, that wait for each other
  // before they ask, so that their first calls overlap; many rounds.
  for (int round = 0; round < 300; ++round) {
    LockState state;
    state.SetToken("fedcba9876543210fedcba9876543210");
    const std::string* seen[2] = {nullptr, nullptr};
    std::atomic<int> ready{0};
    auto ask = [&](int i) {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      seen[i] = &state.TokenString();
    };
    std::thread other(ask, 1);
    ask(0);
    other.join();
    ASSERT_EQ(seen[0], seen[1]) << "round " << round;
    EXPECT_EQ(*seen[0], "fedcba9876543210fedcba9876543210");
  }
}

TEST(LockStateTest, ALostLockStaysLostWhateverVotesComeAfter) {
  auto state = StateWithNames();
  EXPECT_TRUE(state->MarkLost(absl::AbortedError("taken")));
  EXPECT_FALSE(state->MarkLost(absl::DeadlineExceededError("second")));
  std::lock_guard<std::mutex> lock(state->mu());
  EXPECT_EQ(state->LostLocked(), absl::AbortedError("taken"));
  // Votes without errors clear what else was kept, not the loss.
  state->SetVotesLocked({Vote("127.0.0.1:7001", MasterVote::Kind::kGranted,
                              absl::Microseconds(5))});
  EXPECT_EQ(state->LostLocked(), absl::AbortedError("taken"));
  state->SetVotesLocked({Vote("10.9.9.9:1", MasterVote::Kind::kGranted,
                              absl::Microseconds(5))});  // Unpacked.
  EXPECT_EQ(state->LostLocked(), absl::AbortedError("taken"));
  state->SetVotesLocked(
      {Vote("127.0.0.1:7001", MasterVote::Kind::kFailed, absl::Microseconds(5),
            absl::UnavailableError("refused"))});
  EXPECT_EQ(state->LostLocked(), absl::AbortedError("taken"));
  state->SetVotesLocked({});
  EXPECT_EQ(state->LostLocked(), absl::AbortedError("taken"));
  EXPECT_TRUE(state->VotesLocked().empty());
}

}  // namespace
}  // namespace redlock::internal
