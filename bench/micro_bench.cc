// Copyright 2026 The redlock Authors.
//
// Micro benchmarks of the pure pieces on the data path of one lock cycle:
// token generation, command formatting (our argv plus hiredis's RESP
// encoding), reply-to-vote mapping, the quorum decision (VoteTally, and a
// whole QuorumRound over fake masters that answer at once), validity
// arithmetic, and the per-round vote description.
//
//   micro_bench --benchmark_min_time=0.05
//
// Each figure is CPU time on this machine; compare them with each other, not
// with another run (see docs/benchmarks.md).

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redlock/lock.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/algorithm/token.h"
#include "src/algorithm/validity.h"
#include "src/algorithm/vote.h"
#include "src/engine/master_link.h"
#include "src/engine/quorum_round.h"

namespace redlock::internal {
namespace {

constexpr absl::string_view kKey = "redlock:recalc-ratings";
constexpr absl::string_view kToken = "0123456789abcdef0123456789abcdef";
constexpr absl::Duration kTtl = absl::Seconds(10);

// --- Token ------------------------------------------------------------------

void BM_NewToken(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<std::string> token = NewToken();
    benchmark::DoNotOptimize(token);
  }
}
BENCHMARK(BM_NewToken);

// --- Command formatting -----------------------------------------------------

// What Master::Write() does with an argv: pointer and length arrays, then
// hiredis's RESP encoding.
int FormatArgv(const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& arg : argv) {
    ptrs.push_back(arg.data());
    lens.push_back(arg.size());
  }
  char* out = nullptr;
  int len = redisFormatCommandArgv(&out, static_cast<int>(argv.size()),
                                   ptrs.data(), lens.data());
  redisFreeCommand(out);
  return len;
}

void BM_AcquireCommand(benchmark::State& state) {
  for (auto _ : state) {
    Command command = AcquireCommand(kKey, kToken, kTtl);
    benchmark::DoNotOptimize(command);
  }
}
BENCHMARK(BM_AcquireCommand);

void BM_ReleaseCommand(benchmark::State& state) {
  for (auto _ : state) {
    Command command = ReleaseCommand(kKey, kToken);
    benchmark::DoNotOptimize(command);
  }
}
BENCHMARK(BM_ReleaseCommand);

void BM_CommandArgv_Set(benchmark::State& state) {
  const Command command = AcquireCommand(kKey, kToken, kTtl);
  for (auto _ : state) {
    std::vector<std::string> argv = CommandArgv(command, /*eval=*/false);
    benchmark::DoNotOptimize(argv);
  }
}
BENCHMARK(BM_CommandArgv_Set);

void BM_CommandArgv_Evalsha(benchmark::State& state) {
  const Command command = ReleaseCommand(kKey, kToken);
  for (auto _ : state) {
    std::vector<std::string> argv = CommandArgv(command, /*eval=*/false);
    benchmark::DoNotOptimize(argv);
  }
}
BENCHMARK(BM_CommandArgv_Evalsha);

// The whole formatting path of one SET as the engine takes it: build the
// command, its argv, and the RESP bytes.
void BM_FormatSet_Engine(benchmark::State& state) {
  for (auto _ : state) {
    Command command = AcquireCommand(kKey, kToken, kTtl);
    int len = FormatArgv(CommandArgv(command, /*eval=*/false));
    benchmark::DoNotOptimize(len);
  }
}
BENCHMARK(BM_FormatSet_Engine);

void BM_FormatEvalsha_Engine(benchmark::State& state) {
  for (auto _ : state) {
    Command command = ReleaseCommand(kKey, kToken);
    int len = FormatArgv(CommandArgv(command, /*eval=*/false));
    benchmark::DoNotOptimize(len);
  }
}
BENCHMARK(BM_FormatEvalsha_Engine);

// The floor for the two above: hiredis's encoding of a fixed argv, no
// std::string copies.
void BM_FormatSet_HiredisOnly(benchmark::State& state) {
  const char* argv[] = {"SET", kKey.data(), kToken.data(), "NX", "PX", "10000"};
  const size_t lens[] = {3, kKey.size(), kToken.size(), 2, 2, 5};
  for (auto _ : state) {
    char* out = nullptr;
    int len = redisFormatCommandArgv(&out, 6, argv, lens);
    benchmark::DoNotOptimize(out);
    redisFreeCommand(out);
    benchmark::DoNotOptimize(len);
  }
}
BENCHMARK(BM_FormatSet_HiredisOnly);

// --- Replies and votes ------------------------------------------------------

// hiredis parses the bytes, the engine copies the reply and maps it.
void ParseAndVote(benchmark::State& state, absl::string_view wire,
                  VoteMapper map) {
  redisReader* reader = redisReaderCreate();
  for (auto _ : state) {
    redisReaderFeed(reader, wire.data(), wire.size());
    void* reply = nullptr;
    redisReaderGetReply(reader, &reply);
    RedisReply converted = FromHiredis(static_cast<redisReply*>(reply));
    freeReplyObject(reply);
    absl::StatusOr<Vote> vote = map(converted);
    benchmark::DoNotOptimize(vote);
  }
  redisReaderFree(reader);
}

void BM_ParseAndVote_SetOk(benchmark::State& state) {
  ParseAndVote(state, "+OK\r\n", &AcquireVote);
}
BENCHMARK(BM_ParseAndVote_SetOk);

void BM_ParseAndVote_ScriptOne(benchmark::State& state) {
  ParseAndVote(state, ":1\r\n", &ScriptVote);
}
BENCHMARK(BM_ParseAndVote_ScriptOne);

void BM_AcquireVote_Ok(benchmark::State& state) {
  const RedisReply reply = RedisReply::Status("OK");
  for (auto _ : state) benchmark::DoNotOptimize(AcquireVote(reply));
}
BENCHMARK(BM_AcquireVote_Ok);

void BM_AcquireVote_Nil(benchmark::State& state) {
  const RedisReply reply = RedisReply::Nil();
  for (auto _ : state) benchmark::DoNotOptimize(AcquireVote(reply));
}
BENCHMARK(BM_AcquireVote_Nil);

void BM_AcquireVote_OomError(benchmark::State& state) {
  const RedisReply reply = RedisReply::Error(
      "OOM command not allowed when used memory > 'maxmemory'.");
  for (auto _ : state) benchmark::DoNotOptimize(AcquireVote(reply));
}
BENCHMARK(BM_AcquireVote_OomError);

void BM_ScriptVote_One(benchmark::State& state) {
  const RedisReply reply = RedisReply::Integer(1);
  for (auto _ : state) benchmark::DoNotOptimize(ScriptVote(reply));
}
BENCHMARK(BM_ScriptVote_One);

// --- The quorum decision ----------------------------------------------------

void BM_VoteTally_AllGranted(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const absl::StatusOr<Vote> granted = Vote::kGranted;
  for (auto _ : state) {
    VoteTally tally(n, n / 2 + 1);
    for (int i = 0; i < n && !tally.QuorumReached(); ++i) {
      tally.Record(i, granted);
    }
    benchmark::DoNotOptimize(tally.granted());
  }
}
BENCHMARK(BM_VoteTally_AllGranted)->Arg(1)->Arg(3)->Arg(5)->Arg(7);

// A master that keeps the callbacks; the benchmark answers them right after
// QuorumRound::Start() returns, as a master that replies at once would
// (never on the stack of Send(), per the MasterLink contract).
class ImmediateMaster : public MasterLink {
 public:
  explicit ImmediateMaster(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  void Send(const Command& command, ReplyCallback done) override {
    pending_.push_back(std::move(done));
  }
  void AnswerAll(const RedisReply& reply) {
    std::vector<ReplyCallback> pending = std::move(pending_);
    pending_.clear();
    for (ReplyCallback& done : pending) done(reply);
  }

 private:
  std::string name_;
  std::vector<ReplyCallback> pending_;
};

struct FakeMasters {
  explicit FakeMasters(int n) {
    for (int i = 0; i < n; ++i) {
      masters.push_back(std::make_unique<ImmediateMaster>(
          "127.0.0.1:" + std::to_string(7001 + i)));
      links.push_back(masters.back().get());
    }
  }
  void AnswerAll(const RedisReply& reply) {
    for (auto& master : masters) master->AnswerAll(reply);
  }
  std::vector<std::unique_ptr<ImmediateMaster>> masters;
  std::vector<MasterLink*> links;
};

// One won acquire round as the engine runs it: the round's config (SET plus
// the clean-up release), the fan-out, N answers, the decision with validity.
void BM_QuorumRound_AcquireWon(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  FakeMasters fakes(n);
  const RedisReply ok = RedisReply::Status("OK");
  int won = 0;
  for (auto _ : state) {
    RoundConfig config;
    config.quorum = n / 2 + 1;
    config.check_validity = true;
    config.ttl = kTtl;
    config.command = AcquireCommand(kKey, kToken, kTtl);
    config.map_reply = &AcquireVote;
    config.cleanup_on_loss = ReleaseCommand(kKey, kToken);
    auto round = QuorumRound::Start(
        fakes.links, std::move(config), Clock::Real(),
        [&won](RoundResult result) { won += result.status.ok(); });
    fakes.AnswerAll(ok);
  }
  if (won != state.iterations()) state.SkipWithError("a round was not won");
}
BENCHMARK(BM_QuorumRound_AcquireWon)->Arg(1)->Arg(3)->Arg(5)->Arg(7);

// One release round: waits for every master.
void BM_QuorumRound_Release(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  FakeMasters fakes(n);
  const RedisReply one = RedisReply::Integer(1);
  int done = 0;
  for (auto _ : state) {
    RoundConfig config;
    config.command = ReleaseCommand(kKey, kToken);
    config.map_reply = &ScriptVote;
    config.quorum = 1;
    config.decide_when = RoundConfig::DecideWhen::kAllVoted;
    auto round =
        QuorumRound::Start(fakes.links, std::move(config), Clock::Real(),
                           [&done](RoundResult result) { ++done; });
    fakes.AnswerAll(one);
  }
  if (done != state.iterations()) state.SkipWithError("a round hung");
}
BENCHMARK(BM_QuorumRound_Release)->Arg(1)->Arg(3)->Arg(5)->Arg(7);

// The per-master description every decided round builds (QuorumRound::Decide
// formats it for the status message, won or lost).
void BM_DescribeVotes(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<MasterVote> votes(n);
  for (int i = 0; i < n; ++i) {
    votes[i].master = "127.0.0.1:" + std::to_string(7001 + i);
    votes[i].kind = MasterVote::Kind::kGranted;
    votes[i].latency = absl::Microseconds(137 + i);
  }
  for (auto _ : state) {
    std::string text = DescribeVotes(votes);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_DescribeVotes)->Arg(1)->Arg(3)->Arg(5)->Arg(7);

// --- Validity ---------------------------------------------------------------

void BM_Validity(benchmark::State& state) {
  const MonotonicTime start = MonotonicClock::now();
  MonotonicTime now = start + std::chrono::microseconds(250);
  for (auto _ : state) {
    benchmark::DoNotOptimize(now);
    MonotonicTime valid_until = ValidUntil(start, kTtl, 0.01);
    bool ok = HasValidity(valid_until, now, absl::ZeroDuration());
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_Validity);

void BM_SteadyClockNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Clock::Real()->Now());
}
BENCHMARK(BM_SteadyClockNow);

}  // namespace
}  // namespace redlock::internal

BENCHMARK_MAIN();
