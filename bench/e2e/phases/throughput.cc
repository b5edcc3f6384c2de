// Copyright 2026 The redlock Authors.
//
// Throughput phase: one AsyncRedlock on one loop at N = 5 with 1, 8, 64
// locks in flight, interleaved with the masters' own capacity for the same
// commands measured with redis-benchmark (the ceiling).
//
// Reports results.json's "throughput".

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/e2e/async_runner.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/stats.h"
#include "bench/e2e/sync_client.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "src/algorithm/scripts.h"

extern char** environ;

ABSL_FLAG(int, throughput_rounds, 4, "Throughput phase: interleaved rounds.");
ABSL_FLAG(absl::Duration, throughput_block, absl::Seconds(1),
          "Throughput phase: how long each in-flight setting runs per round.");
ABSL_FLAG(int, ceiling_requests, 100000,
          "Throughput phase: redis-benchmark requests per master and command "
          "for the ceiling.");

namespace redlock::bench {
namespace {

struct ThroughputBlock {
  int64_t cycles = 0;
  int64_t errors = 0;
  double wall_s = 0;
  double cpu_s = 0;
  std::string last_error;
};

// K slots, each cycling acquire -> release on its own resource until `end`.
class ThroughputRun {
 public:
  ThroughputRun(AsyncRedlock* client, absl::Duration ttl, int slots, int tag)
      : client_(client), ttl_(ttl) {
    for (int i = 0; i < slots; ++i) {
      resources_.push_back(absl::StrCat("tp-", tag, "-", i));
    }
  }

  ThroughputBlock Run(event_base* base, absl::Duration duration) {
    ThroughputBlock block;
    const Cpu cpu0 = CpuNow(RUSAGE_THREAD);
    const SteadyTime start = Now();
    end_ = start + absl::ToChronoNanoseconds(duration);
    active_ = static_cast<int>(resources_.size());
    for (int i = 0; i < static_cast<int>(resources_.size()); ++i) Next(i);
    RunUntil(
        base, [this] { return active_ == 0; }, duration + absl::Seconds(10));
    block.wall_s =
        SecondsBetween(start, last_done_ > start ? last_done_ : Now());
    block.cpu_s = (CpuNow(RUSAGE_THREAD) - cpu0).total();
    block.cycles = cycles_;
    block.errors = errors_;
    block.last_error = last_error_;
    return block;
  }

 private:
  void Next(int slot) {
    if (Now() >= end_) {
      --active_;
      return;
    }
    absl::Status s = client_->AcquireAsync(
        resources_[slot], ttl_, absl::ZeroDuration(),
        [this, slot](absl::StatusOr<Lock> lock) {
          if (!lock.ok()) {
            Error(lock.status());
            Next(slot);
            return;
          }
          absl::Status r = client_->ReleaseAsync(
              *lock, [this, slot](absl::StatusOr<ReleaseReport> report) {
                if (report.ok()) {
                  ++cycles_;
                  last_done_ = Now();
                } else {
                  Error(report.status());
                }
                Next(slot);
              });
          if (!r.ok()) {
            Error(r);
            Next(slot);
          }
        });
    if (!s.ok()) {
      Error(s);
      --active_;
    }
  }
  void Error(const absl::Status& s) {
    ++errors_;
    last_error_ = s.ToString();
  }

  AsyncRedlock* const client_;
  const absl::Duration ttl_;
  std::vector<std::string> resources_;
  SteadyTime end_;
  SteadyTime last_done_;
  int active_ = 0;
  int64_t cycles_ = 0;
  int64_t errors_ = 0;
  std::string last_error_;
};

struct CeilingSample {
  double set_cmds_per_s = 0;   // All N masters together, wall-clock based.
  double eval_cmds_per_s = 0;  // Same for EVALSHA.
  double cycles_per_s = 0;     // 1 / (N/set + N/eval).
};

// Runs redis-benchmark against every master at once with the same command,
// and returns the aggregate rate: total requests / wall time of the slowest.
absl::StatusOr<double> RedisBenchmarkAll(const std::string& bin,
                                         const std::vector<Master>& masters,
                                         const std::vector<std::string>& cmd,
                                         int requests) {
  struct Child {
    pid_t pid = -1;
    int out = -1;
  };
  std::vector<Child> children;
  const SteadyTime start = Now();
  absl::Status failure;
  for (const Master& m : masters) {
    std::vector<std::string> args = {bin,
                                     "-h",
                                     m.address.host,
                                     "-p",
                                     absl::StrCat(m.address.port),
                                     "-n",
                                     absl::StrCat(requests),
                                     "-c",
                                     "1",
                                     "-P",
                                     "64",
                                     "-r",
                                     "1000000",
                                     "--csv"};
    if (m.address.has_password) {
      if (!m.address.user.empty()) {
        args.insert(args.end(), {"--user", m.address.user});
      }
      args.insert(args.end(), {"-a", m.address.password});
    }
    if (m.address.db != 0) {
      args.insert(args.end(), {"--dbnum", absl::StrCat(m.address.db)});
    }
    args.insert(args.end(), cmd.begin(), cmd.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      failure = absl::InternalError("pipe2 failed");
      break;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, bin.c_str(), &actions, nullptr, argv.data(),
                          environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      failure = absl::NotFoundError(
          absl::StrCat("cannot run ", bin, ": ", std::strerror(rc)));
      break;
    }
    children.push_back({pid, fds[0]});
  }
  std::string errors;
  for (Child& child : children) {
    int status = 0;
    waitpid(child.pid, &status, 0);
    std::string output;
    char buf[4096];
    ssize_t n;
    while ((n = read(child.out, buf, sizeof(buf))) > 0) output.append(buf, n);
    close(child.out);
    double rps = 0;
    for (absl::string_view line : absl::StrSplit(output, '\n')) {
      std::vector<std::string> cols = absl::StrSplit(line, "\",\"");
      if (cols.size() >= 2 && !absl::StartsWith(line, "\"test\"") &&
          absl::SimpleAtod(cols[1], &rps)) {
        break;
      }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || rps <= 0) {
      absl::StrAppend(&errors, "redis-benchmark failed: ",
                      absl::StripAsciiWhitespace(output).substr(0, 300), "; ");
    }
  }
  const double wall = SecondsBetween(start, Now());
  if (!failure.ok()) return failure;
  if (!errors.empty()) return absl::InternalError(errors);
  return static_cast<double>(requests) * masters.size() / wall;
}

absl::StatusOr<CeilingSample> MeasureCeiling(const std::string& bin,
                                             const std::vector<Master>& masters,
                                             int requests) {
  const std::string token(32, 'c');
  const std::string key = absl::StrCat(kKeyPrefix, "ceiling:__rand_int__");
  CeilingSample sample;
  absl::StatusOr<double> set = RedisBenchmarkAll(
      bin, masters, {"SET", key, token, "NX", "PX", "10000"}, requests);
  if (!set.ok()) return set.status();
  absl::StatusOr<double> eval = RedisBenchmarkAll(
      bin, masters,
      {"EVALSHA", internal::ReleaseScript().sha1, "1", key, token}, requests);
  if (!eval.ok()) return eval.status();
  const double n = static_cast<double>(masters.size());
  sample.set_cmds_per_s = *set;
  sample.eval_cmds_per_s = *eval;
  sample.cycles_per_s = 1.0 / (n / *set + n / *eval);
  return sample;
}

double BlockRate(const ThroughputBlock& b) {
  return b.wall_s > 0 ? b.cycles / b.wall_s : 0;
}

class ThroughputPhase : public Phase {
 public:
  explicit ThroughputPhase(bool quick)
      : rounds_(quick ? 1 : absl::GetFlag(FLAGS_throughput_rounds)),
        block_(quick ? absl::Milliseconds(300)
                     : absl::GetFlag(FLAGS_throughput_block)),
        ceiling_requests_(quick ? 20000
                                : absl::GetFlag(FLAGS_ceiling_requests)) {}

  absl::Status Run(Context& ctx) override {
    const std::vector<Master>& masters = ctx.masters;
    const int available = static_cast<int>(masters.size());
    const absl::Duration ttl = ctx.ttl;
    masters_ = std::min(5, available);
    in_flight_ = {1, 8, 64};
    blocks_.resize(in_flight_.size());
    std::vector<Master> tp_masters(masters.begin(), masters.begin() + masters_);
    for (const Master& m : tp_masters) {
      absl::StatusOr<ContextPtr> c = ConnectSync(m.address);
      if (c.ok()) LoadReleaseScript(c->get()).IgnoreError();
    }
    absl::StatusOr<std::unique_ptr<AsyncRunner>> runner = AsyncRunner::Create(
        ClientOptions(UrisOf(masters, masters_), false), "tp-warmup", ttl);
    absl::Status warm =
        runner.ok() ? WarmUp(**runner, 50, absl::Seconds(10)) : runner.status();
    if (!warm.ok()) {
      skipped_ = warm.ToString();
    } else {
      ran_ = true;
      Log(absl::StrCat("throughput: N=", masters_, ", ", rounds_,
                       " rounds of 1/8/64 in flight (",
                       absl::FormatDuration(block_),
                       " each) and redis-benchmark"));
      for (int round = 0; round < rounds_; ++round) {
        for (size_t k = 0; k < in_flight_.size(); ++k) {
          const size_t i = (k + round) % in_flight_.size();
          ThroughputRun run(&(*runner)->client(), ttl, in_flight_[i],
                            in_flight_[i]);
          blocks_[i].push_back(run.Run((*runner)->base(), block_));
        }
        absl::StatusOr<CeilingSample> ceiling =
            MeasureCeiling(ctx.redis_benchmark, tp_masters, ceiling_requests_);
        if (ceiling.ok()) {
          ceilings_.push_back(*ceiling);
        } else {
          ceiling_error_ = ceiling.status().ToString();
          Log(absl::StrCat("ceiling: ", ceiling_error_));
        }
        Log(absl::StrCat("throughput round ", round + 1, "/", rounds_));
      }
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["throughput_rounds"] = rounds_;
    settings["throughput_block_s"] = Num(absl::ToDoubleSeconds(block_));
    settings["ceiling_requests"] = ceiling_requests_;
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target t = Unmeasured("64 in flight ≥ 50% of ceiling (N=5)");
    const double ceiling_cycles = CeilingCycles();
    if (ran_ && ceiling_cycles > 0) {
      const double rate = Rate(in_flight_.size() - 1);
      const double r = Ratio(rate, ceiling_cycles);
      t = {t.what,
           absl::StrFormat("%.0f%% (%.0f of %.0f cycles/s)", 100 * r, rate,
                           ceiling_cycles),
           r >= 0.5, true};
    }
    targets.push_back(t);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) return;
    const double ceiling_cycles = CeilingCycles();
    absl::StrAppend(
        &md, "### Throughput (N=", masters_,
        ", one AsyncRedlock on one loop)\n\n", "Each in-flight setting ran ",
        absl::FormatDuration(block_), " per round for ", rounds_,
        " rounds, interleaved with the ceiling; figures are medians over "
        "rounds. Ceiling: `redis-benchmark -c 1 -P 64 -r 1000000` (one "
        "connection "
        "per master with 64 commands in flight, as the client has at 64 locks) "
        "against all ",
        masters_,
        " masters at once, once with `SET key tok NX PX 10000`, once with "
        "`EVALSHA <release> 1 key tok`; a cycle is one of each on every "
        "master (2·N commands), so ceiling cycles/s = 1 / (N/SET rate + "
        "N/EVALSHA rate).\n\n",
        "| locks in flight | cycles/s | ÷ ceiling | client CPU µs/cycle | "
        "errors |\n|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < in_flight_.size(); ++i) {
      double cpu = 0;
      int64_t cycles = 0, errors = 0;
      for (const ThroughputBlock& b : blocks_[i]) {
        cpu += b.cpu_s;
        cycles += b.cycles;
        errors += b.errors;
      }
      const double rate = Rate(i);
      absl::StrAppend(
          &md, "| ", in_flight_[i], " | ", absl::StrFormat("%.0f", rate), " | ",
          ceiling_cycles > 0
              ? absl::StrFormat("%.0f%%", 100 * rate / ceiling_cycles)
              : "n/a",
          " | ", absl::StrFormat("%.1f", cycles ? 1e6 * cpu / cycles : 0),
          " | ", errors, " |\n");
    }
    std::vector<double> set_rates, eval_rates;
    for (const CeilingSample& c : ceilings_) {
      set_rates.push_back(c.set_cmds_per_s);
      eval_rates.push_back(c.eval_cmds_per_s);
    }
    absl::StrAppend(
        &md, "\nCeiling: ",
        ceilings_.empty()
            ? absl::StrCat("not measured (", ceiling_error_, ")")
            : absl::StrFormat("%.0f cycles/s (SET %.0f/s, EVALSHA %.0f/s over "
                              "all masters; each the median of its own %d "
                              "runs, so the cycles need not recompute from "
                              "the two rates)",
                              ceiling_cycles, Median(set_rates),
                              Median(eval_rates),
                              static_cast<int>(ceilings_.size())),
        ".\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      const double ceiling_cycles = CeilingCycles();
      j["masters"] = masters_;
      j["ceiling_cycles_per_s"] = Num(ceiling_cycles);
      Json runs = Json::array();
      for (const CeilingSample& c : ceilings_) {
        Json run = Json::object();
        run["set_cmds_per_s"] = Num(c.set_cmds_per_s);
        run["evalsha_cmds_per_s"] = Num(c.eval_cmds_per_s);
        run["cycles_per_s"] = Num(c.cycles_per_s);
        runs.push_back(std::move(run));
      }
      j["ceiling_runs"] = std::move(runs);
      j["ceiling_error"] = ceiling_error_;
      Json in_flight = Json::array();
      for (size_t i = 0; i < in_flight_.size(); ++i) {
        std::vector<double> rates, cpu;
        int64_t errors = 0;
        std::string last_error;
        for (const ThroughputBlock& b : blocks_[i]) {
          rates.push_back(BlockRate(b));
          cpu.push_back(b.cycles ? 1e6 * b.cpu_s / b.cycles : 0);
          errors += b.errors;
          if (!b.last_error.empty()) last_error = b.last_error;
        }
        Json row = Json::object();
        row["locks"] = in_flight_[i];
        row["cycles_per_s"] = Num(Rate(i));
        row["cycles_per_s_per_round"] = Nums(rates);
        row["ratio_to_ceiling"] = Num(Ratio(Rate(i), ceiling_cycles));
        row["cpu_us_per_cycle_per_round"] = Nums(cpu);
        row["errors"] = errors;
        row["last_error"] = last_error;
        in_flight.push_back(std::move(row));
      }
      j["in_flight"] = std::move(in_flight);
    }
    results["throughput"] = std::move(j);
  }

 private:
  // Cycles/s with in_flight_[i] locks in flight: the median over rounds.
  double Rate(size_t i) const {
    std::vector<double> rates;
    for (const ThroughputBlock& b : blocks_[i]) rates.push_back(BlockRate(b));
    return Median(rates);
  }

  // The ceiling in cycles/s: the median over rounds; 0 when not run.
  double CeilingCycles() const {
    if (!ran_) return 0;
    std::vector<double> cs;
    for (const CeilingSample& c : ceilings_) cs.push_back(c.cycles_per_s);
    return Median(cs);
  }

  const int rounds_;
  const absl::Duration block_;
  const int ceiling_requests_;
  bool ran_ = false;
  std::string skipped_;
  int masters_ = 0;
  std::vector<int> in_flight_;
  std::vector<std::vector<ThroughputBlock>> blocks_;  // Per in-flight setting.
  std::vector<CeilingSample> ceilings_;
  std::string ceiling_error_;
};

const RegisterPhase kRegistered(30, "throughput",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<ThroughputPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
