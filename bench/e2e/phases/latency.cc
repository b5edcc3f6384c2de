// Copyright 2026 The redlock Authors.
//
// Latency phase: the floor; raw fan-out (the cheapest correct N-master cycle
// a hand-written hiredis client could do: pipelined fan-out, poll, quorum
// for acquire, all for release); AsyncRedlock driven on this thread;
// blocking Redlock; for N = 1, 3, 5, 7. Every configuration runs in blocks,
// each right after a floor block of the same size. Also the client CPU per
// cycle (getrusage) and the resident memory.
//
// Reports results.json's "floor" and "latency".

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/e2e/async_runner.h"
#include "bench/e2e/blocking_runner.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/raw_fanout_runner.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/stats.h"

ABSL_FLAG(int, rounds, 16,
          "Latency phase: interleaved rounds; each round runs, for every "
          "configuration, a floor block and then the configuration's block.");
ABSL_FLAG(int, block_cycles, 400, "Latency phase: lock cycles per block.");

namespace redlock::bench {
namespace {

struct LatencyConfig {
  std::string name;    // "async N=5"
  std::string client;  // floor, raw, async, blocking
  int masters = 1;
  std::unique_ptr<Runner> runner;
  Samples own;
  Samples floor;  // The floor blocks run right before this config's blocks.
  std::vector<double> round_ratio_p50;  // Block p50 / preceding floor p50.
};

double CpuPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.total() / s.cpu_cycles : 0;
}
double UserPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.user / s.cpu_cycles : 0;
}
double SysPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.sys / s.cpu_cycles : 0;
}

class LatencyPhase : public Phase {
 public:
  explicit LatencyPhase(bool quick)
      : rounds_(quick ? 3 : absl::GetFlag(FLAGS_rounds)),
        block_cycles_(quick ? 60 : absl::GetFlag(FLAGS_block_cycles)) {}

  absl::Status Run(Context& ctx) override {
    const std::vector<Master>& masters = ctx.masters;
    const int available = static_cast<int>(masters.size());
    const absl::Duration ttl = ctx.ttl;
    for (const char* client : {"raw", "async", "blocking", "handover"}) {
      for (int n : {1, 3, 5, 7}) {
        if (n > available) continue;
        LatencyConfig config;
        config.client = client;
        config.masters = n;
        config.name = absl::StrCat(client, " N=", n);
        const std::string resource = absl::StrCat("cycle-", client, "-", n);
        absl::StatusOr<std::unique_ptr<Runner>> runner;
        if (config.client == "raw") {
          runner = RawFanoutRunner::Create(masters, n, ttl);
        } else if (config.client == "async") {
          runner = AsyncRunner::Create(ClientOptions(UrisOf(masters, n), false),
                                       resource, ttl);
        } else {
          runner = BlockingRunner::Create(
              ClientOptions(UrisOf(masters, n), false), resource, ttl,
              /*callers_turn=*/config.client == "blocking");
        }
        if (!runner.ok()) {
          return absl::InternalError(
              absl::StrCat(config.name, ": ", runner.status().ToString()));
        }
        config.runner = *std::move(runner);
        if (absl::Status s = WarmUp(*config.runner, 50, absl::Seconds(10));
            !s.ok()) {
          return absl::InternalError(
              absl::StrCat(config.name, ": ", s.ToString()));
        }
        configs_.push_back(std::move(config));
      }
    }
    ctx.memory.with_latency_clients_kb = ProcStatusKb("VmRSS");
    if (configs_.empty()) return absl::OkStatus();
    Log(absl::StrCat("latency: ", configs_.size(), " configurations x ",
                     rounds_, " rounds x ", block_cycles_,
                     " cycles, each block after a floor block"));
    for (int round = 0; round < rounds_; ++round) {
      for (size_t k = 0; k < configs_.size(); ++k) {
        // Rotate, so that no configuration always follows the same one.
        LatencyConfig& config = configs_[(k + round) % configs_.size()];
        BlockResult f = RunBlock(*ctx.floor, block_cycles_, config.floor);
        BlockResult c = RunBlock(*config.runner, block_cycles_, config.own);
        if (f.p50_us > 0 && c.p50_us > 0) {
          config.round_ratio_p50.push_back(c.p50_us / f.p50_us);
        }
      }
      Log(absl::StrCat("latency round ", round + 1, "/", rounds_));
    }
    for (const LatencyConfig& config : configs_) {
      Samples& f = floor_all_;
      f.acquire_us.insert(f.acquire_us.end(), config.floor.acquire_us.begin(),
                          config.floor.acquire_us.end());
      f.cycle_us.insert(f.cycle_us.end(), config.floor.cycle_us.begin(),
                        config.floor.cycle_us.end());
      f.cpu += config.floor.cpu;
      f.cpu_cycles += config.floor.cpu_cycles;
      f.wall_s += config.floor.wall_s;
      f.errors += config.floor.errors;
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["rounds"] = rounds_;
    settings["block_cycles"] = block_cycles_;
    // The lock TTL of the latency, fault and throughput phases (--ttl);
    // results.json has always listed it here.
    settings["ttl_ms"] = Num(absl::ToDoubleMilliseconds(ctx.ttl));
  }

  void AddTargets(std::vector<Target>& targets) const override {
    for (const char* client : {"async", "blocking"}) {
      const LatencyConfig* c = Find(client, 5);
      Target p50 = Unmeasured(
          absl::StrCat("N=5 cycle p50 ≤ 1.3× floor p50 (", client, ")"));
      Target p99 = Unmeasured(
          absl::StrCat("N=5 cycle p99 ≤ 1.5× floor p99 (", client, ")"));
      Target cpu = Unmeasured(absl::StrCat(
          "client CPU per cycle at N=5 ≤ 1.5 × 5 × floor CPU per cycle (",
          client, ")"));
      if (c != nullptr) {
        const Dist own = Summarize(c->own.cycle_us);
        const Dist fl = Summarize(c->floor.cycle_us);
        const double r50 = Ratio(own.p50, fl.p50);
        const double r99 = Ratio(own.p99, fl.p99);
        p50 = {p50.what,
               absl::StrFormat(
                   "%s (%s vs %s µs; per round %s–%s; raw fan-out N=5: %s, so "
                   "the library adds %s)",
                   X(r50), Us(own.p50), Us(fl.p50),
                   X(*std::min_element(c->round_ratio_p50.begin(),
                                       c->round_ratio_p50.end())),
                   X(*std::max_element(c->round_ratio_p50.begin(),
                                       c->round_ratio_p50.end())),
                   X(r50 / std::max(1e-9, RatioToRaw(*c, 0.5))),
                   X(RatioToRaw(*c, 0.5))),
               r50 <= 1.3, true};
        p99 = {p99.what,
               absl::StrFormat("%s (%s vs %s µs; the library adds %s to raw "
                               "fan-out N=5)",
                               X(r99), Us(own.p99), Us(fl.p99),
                               X(RatioToRaw(*c, 0.99))),
               r99 <= 1.5, true};
        const double cpu_us = CpuPerCycleUs(c->own);
        const double fcpu = CpuPerCycleUs(c->floor);
        const double rc = Ratio(cpu_us, 5 * fcpu);
        cpu = {cpu.what,
               absl::StrFormat("%s of 5×floor (%.1f vs 5 × %.1f µs)", X(rc),
                               cpu_us, fcpu),
               rc <= 1.5, true};
      }
      targets.push_back(p50);
      targets.push_back(p99);
      targets.push_back(cpu);
    }
    AddBlockingTargets(targets);
  }

  // Issue 25: the blocking client at the async client's speed, every N.
  void AddBlockingTargets(std::vector<Target>& targets) const {
    struct Bound {
      const char* what;
      double bound;
      double (*ratio)(const LatencyConfig&, const LatencyConfig&);
    };
    const Bound bounds[] = {
        {"blocking cycle p50 ≤ 1.1× async's, same N, N = 1…7", 1.1,
         [](const LatencyConfig& b, const LatencyConfig& a) {
           return Ratio(Summarize(b.own.cycle_us).p50,
                        Summarize(a.own.cycle_us).p50);
         }},
        {"blocking client CPU per cycle ≤ 1.1× async's, same N, N = 1…7", 1.1,
         [](const LatencyConfig& b, const LatencyConfig& a) {
           return Ratio(CpuPerCycleUs(b.own), CpuPerCycleUs(a.own));
         }},
        {"blocking cycle p99 ≤ 1.2× async's, same N, N = 1…7", 1.2,
         [](const LatencyConfig& b, const LatencyConfig& a) {
           return Ratio(Summarize(b.own.cycle_us).p99,
                        Summarize(a.own.cycle_us).p99);
         }},
    };
    for (const Bound& bound : bounds) {
      std::string per_n;
      double worst = 0;
      bool measured = false;
      for (int n : {1, 3, 5, 7}) {
        const LatencyConfig* b = Find("blocking", n);
        const LatencyConfig* a = Find("async", n);
        const LatencyConfig* h = Find("handover", n);
        if (b == nullptr || a == nullptr) continue;
        const double r = bound.ratio(*b, *a);
        worst = std::max(worst, r);
        measured = true;
        absl::StrAppend(&per_n, per_n.empty() ? "" : "; ", "N=", n, " ",
                        X(r));
        if (h != nullptr) {
          absl::StrAppend(&per_n, " (before: ", X(bound.ratio(*h, *a)), ")");
        }
      }
      Target t = Unmeasured(bound.what);
      if (measured) {
        t = {t.what, absl::StrFormat("worst %s: %s", X(worst), per_n),
             worst <= bound.bound, true};
      }
      targets.push_back(t);
    }
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (configs_.empty()) return;
    const Dist floor_cycle = Summarize(floor_all_.cycle_us);
    const Dist floor_acquire = Summarize(floor_all_.acquire_us);
    const double floor_cpu_us = CpuPerCycleUs(floor_all_);
    absl::StrAppend(
        &md,
        "### Lock cycle latency (acquire + release, one client, "
        "sequential)\n\n",
        rounds_, " rounds; in each, every configuration ran ", block_cycles_,
        " cycles right after a floor block of the same size. \"×floor\" "
        "compares a configuration with its own floor blocks. Times in µs.\n\n",
        "| configuration | cycles | p50 | p90 | p99 | p99.9 | acquire p50 | "
        "floor p50 | floor p99 | ×floor p50 | ×floor p99 | ×floor p50 per "
        "round (min / median / max) | ÷ raw same N (p50, p99) | errors |\n",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|--:|\n");
    absl::StrAppend(&md, "| **floor** (1 master, blocking hiredis) | ",
                    floor_cycle.count, " | ", Us(floor_cycle.p50), " | ",
                    Us(floor_cycle.p90), " | ", Us(floor_cycle.p99), " | ",
                    Us(floor_cycle.p999), " | ", Us(floor_acquire.p50),
                    " | | | | | | | ", floor_all_.errors, " |\n");
    for (const LatencyConfig& c : configs_) {
      const Dist own = Summarize(c.own.cycle_us);
      const Dist acq = Summarize(c.own.acquire_us);
      const Dist fl = Summarize(c.floor.cycle_us);
      std::vector<double> rr = c.round_ratio_p50;
      std::sort(rr.begin(), rr.end());
      absl::StrAppend(
          &md, "| ", c.name, " | ", own.count, " | ", Us(own.p50), " | ",
          Us(own.p90), " | ", Us(own.p99), " | ", Us(own.p999), " | ",
          Us(acq.p50), " | ", Us(fl.p50), " | ", Us(fl.p99), " | ",
          X(Ratio(own.p50, fl.p50)), " | ", X(Ratio(own.p99, fl.p99)), " | ",
          rr.empty() ? ""
                     : absl::StrCat(X(rr.front()), " / ", X(Median(rr)), " / ",
                                    X(rr.back())),
          " | ",
          c.client == "raw" ? ""
                            : absl::StrCat(X(RatioToRaw(c, 0.5)), ", ",
                                           X(RatioToRaw(c, 0.99))),
          " | ", c.own.errors, " |\n");
    }
    absl::StrAppend(
        &md,
        "\n`raw`: a hand-written hiredis fan-out (all SETs written before any "
        "reply is read, poll(), quorum of OKs; then EVALSHA to all, wait for "
        "all): what an N-master cycle costs on this machine before any library "
        "code. `async`: AsyncRedlock on an event_base turned by the bench "
        "thread. `blocking`: redlock::Redlock, whose caller turns the loop "
        "itself while nobody else does. `handover`: the same with that off, "
        "every call handed to its loop thread (how it worked before issue "
        "25).\n\n");

    absl::StrAppend(
        &md, "### Client CPU per cycle\n\n",
        "user + system CPU from getrusage over each block: RUSAGE_THREAD for "
        "floor, raw and async (the whole client runs on the bench thread), "
        "RUSAGE_SELF for blocking and handover (their loop threads included). Redis servers "
        "are "
        "other processes and not counted.\n\n",
        "| configuration | CPU µs/cycle | user | system | floor CPU µs/cycle "
        "(same blocks) | ÷ (N × floor) |\n|---|--:|--:|--:|--:|--:|\n");
    absl::StrAppend(&md, "| floor | ", absl::StrFormat("%.1f", floor_cpu_us),
                    " | ", absl::StrFormat("%.1f", UserPerCycleUs(floor_all_)),
                    " | ", absl::StrFormat("%.1f", SysPerCycleUs(floor_all_)),
                    " | | |\n");
    for (const LatencyConfig& c : configs_) {
      const double cpu = CpuPerCycleUs(c.own);
      const double fcpu = CpuPerCycleUs(c.floor);
      absl::StrAppend(&md, "| ", c.name, " | ", absl::StrFormat("%.1f", cpu),
                      " | ", absl::StrFormat("%.1f", UserPerCycleUs(c.own)),
                      " | ", absl::StrFormat("%.1f", SysPerCycleUs(c.own)),
                      " | ", absl::StrFormat("%.1f", fcpu), " | ",
                      X(Ratio(cpu, c.masters * fcpu)), " |\n");
    }
    AppendBlockingMarkdown(md);
    const Memory& m = ctx.memory;
    absl::StrAppend(
        &md, "\nResident memory: ",
        absl::StrFormat("%.1f MiB at start, %.1f MiB with the floor "
                        "connection, %.1f MiB with all %d latency clients "
                        "connected, %.1f MiB at the end, peak %.1f MiB.\n\n",
                        m.start_kb / 1024.0, m.with_floor_kb / 1024.0,
                        m.with_latency_clients_kb / 1024.0,
                        static_cast<int>(configs_.size()), m.end_kb / 1024.0,
                        m.peak_kb / 1024.0));
  }

  // The blocking client beside the async one at the same N, and beside
  // itself as it was (calls handed to the loop thread).
  void AppendBlockingMarkdown(std::string& md) const {
    if (Find("blocking", 1) == nullptr && Find("blocking", 5) == nullptr) {
      return;
    }
    absl::StrAppend(
        &md,
        "\n### The blocking client beside the async one (same N, same "
        "blocks)\n\n",
        "`blocking`: redlock::Redlock as built: a caller turns the client's "
        "loop itself while nobody else does (src/transport/event_loop.h), so "
        "a call's request, replies and result stay on the caller's thread. "
        "`handover`: the same client with that switched off "
        "(`EventLoop::SetCallersTurnForTesting(false)`), which is how every "
        "call worked before: posted to the loop thread, the caller asleep "
        "until the loop thread wakes it. Context switches: ru_nvcsw + "
        "ru_nivcsw over the blocks (RUSAGE_THREAD for async, RUSAGE_SELF for "
        "the blocking clients).\n\n",
        "| N | blocking ÷ async p50 | p99 | CPU | handover ÷ async p50 | p99 | "
        "CPU | context switches per cycle: async / blocking / handover |\n",
        "|--:|--:|--:|--:|--:|--:|--:|---|\n");
    auto switches = [](const LatencyConfig* c) {
      return c == nullptr || c->own.cpu_cycles == 0
                 ? std::string("—")
                 : absl::StrFormat("%.2f",
                                   c->own.cpu.switches / c->own.cpu_cycles);
    };
    for (int n : {1, 3, 5, 7}) {
      const LatencyConfig* a = Find("async", n);
      const LatencyConfig* b = Find("blocking", n);
      const LatencyConfig* h = Find("handover", n);
      if (a == nullptr || b == nullptr) continue;
      const Dist ad = Summarize(a->own.cycle_us);
      auto cols = [&](const LatencyConfig* c) {
        if (c == nullptr) return std::string(" | | ");
        const Dist d = Summarize(c->own.cycle_us);
        return absl::StrCat(
            X(Ratio(d.p50, ad.p50)), " | ", X(Ratio(d.p99, ad.p99)), " | ",
            X(Ratio(CpuPerCycleUs(c->own), CpuPerCycleUs(a->own))));
      };
      absl::StrAppend(&md, "| ", n, " | ", cols(b), " | ", cols(h), " | ",
                      switches(a), " / ", switches(b), " / ", switches(h),
                      " |\n");
    }
  }

  void AddResults(Json& results) const override {
    Json floor = Json::object();
    floor["cycle"] = DistJson(Summarize(floor_all_.cycle_us));
    floor["acquire"] = DistJson(Summarize(floor_all_.acquire_us));
    floor["cpu_us_per_cycle"] = Num(CpuPerCycleUs(floor_all_));
    floor["cpu_user_us_per_cycle"] = Num(UserPerCycleUs(floor_all_));
    floor["cpu_sys_us_per_cycle"] = Num(SysPerCycleUs(floor_all_));
    floor["errors"] = floor_all_.errors;
    results["floor"] = std::move(floor);

    Json latency = Json::array();
    for (const LatencyConfig& c : configs_) {
      const Dist own = Summarize(c.own.cycle_us);
      const Dist fl = Summarize(c.floor.cycle_us);
      Json j = Json::object();
      j["name"] = c.name;
      j["client"] = c.client;
      j["masters"] = c.masters;
      j["cycle"] = DistJson(own);
      j["acquire"] = DistJson(Summarize(c.own.acquire_us));
      j["floor_cycle"] = DistJson(fl);
      j["floor_acquire"] = DistJson(Summarize(c.floor.acquire_us));
      j["ratio_p50"] = Num(Ratio(own.p50, fl.p50));
      j["ratio_p90"] = Num(Ratio(own.p90, fl.p90));
      j["ratio_p99"] = Num(Ratio(own.p99, fl.p99));
      j["ratio_p999"] = Num(Ratio(own.p999, fl.p999));
      j["round_ratio_p50"] = Nums(c.round_ratio_p50);
      j["ratio_p50_to_raw"] = Num(c.client == "raw" ? 1 : RatioToRaw(c, 0.5));
      j["ratio_p99_to_raw"] = Num(c.client == "raw" ? 1 : RatioToRaw(c, 0.99));
      j["cpu_scope"] = c.runner->cpu_scope() == RUSAGE_THREAD ? "RUSAGE_THREAD"
                                                              : "RUSAGE_SELF";
      j["cpu_us_per_cycle"] = Num(CpuPerCycleUs(c.own));
      j["cpu_user_us_per_cycle"] = Num(UserPerCycleUs(c.own));
      j["cpu_sys_us_per_cycle"] = Num(SysPerCycleUs(c.own));
      j["context_switches_per_cycle"] =
          Num(c.own.cpu_cycles > 0 ? c.own.cpu.switches / c.own.cpu_cycles
                                   : 0);
      j["floor_cpu_us_per_cycle"] = Num(CpuPerCycleUs(c.floor));
      j["cpu_ratio_to_n_floor"] =
          Num(Ratio(CpuPerCycleUs(c.own), c.masters * CpuPerCycleUs(c.floor)));
      j["cycles_per_s_sequential"] =
          Num(c.own.wall_s > 0 ? c.own.cpu_cycles / c.own.wall_s : 0);
      j["errors"] = c.own.errors;
      j["last_error"] = c.own.last_error;
      latency.push_back(std::move(j));
    }
    results["latency"] = std::move(latency);
  }

  void AddCdf(Cdf& cdf) const override {
    cdf.cycle.push_back({"floor (1 master)", floor_all_.cycle_us});
    for (const LatencyConfig& c : configs_) {
      if (c.client == "async" || (c.client != "floor" && c.masters == 5)) {
        cdf.cycle.push_back({c.name, c.own.cycle_us});
      }
    }
  }

 private:
  const LatencyConfig* Find(absl::string_view client, int n) const {
    for (const LatencyConfig& c : configs_) {
      if (c.client == client && c.masters == n) return &c;
    }
    return nullptr;
  }

  // A configuration's ratio to its floor, divided by the raw fan-out's ratio
  // to its floor at the same N: how much the library adds to the cheapest
  // N-master cycle, each normalised by the floor blocks next to it.
  double RatioToRaw(const LatencyConfig& c, double q) const {
    const LatencyConfig* raw = Find("raw", c.masters);
    if (raw == nullptr) return 0.0;
    auto to_floor = [q](const LatencyConfig& x) {
      std::vector<double> own = x.own.cycle_us, fl = x.floor.cycle_us;
      std::sort(own.begin(), own.end());
      std::sort(fl.begin(), fl.end());
      return Ratio(Quantile(own, q), Quantile(fl, q));
    };
    return Ratio(to_floor(c), to_floor(*raw));
  }

  const int rounds_;
  const int block_cycles_;
  std::vector<LatencyConfig> configs_;
  Samples floor_all_;  // Every floor block, of every configuration.
};

const RegisterPhase kRegistered(10, "latency",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<LatencyPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
