// Copyright 2026 The redlock Authors.
//
// Fresh-client phase: what a new process pays for its first lock — a cron
// job's `redlock run`: Redlock::Create(), the first Acquire(), Release(),
// and the client destroyed. With all five masters healthy, and with master 5
// SIGSTOPped (the kernel still accepts its TCP connections; it never
// answers), in pairs of one each. The deployment is marked first by an
// earlier client, as every run but the very first finds it.
//
// Needs the masters this process started (it signals one of them by PID);
// skipped with --masters.
//
// Reports results.json's "fresh".

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/stats.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"

ABSL_FLAG(int, fresh_rounds, 50,
          "Fresh-client phase: rounds of --fresh_block pairs of fresh clients, "
          "one with every master healthy, one with master 5 stopped.");
ABSL_FLAG(int, fresh_block, 10,
          "Fresh-client phase: pairs of fresh clients per round.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
constexpr int kStoppedIndex = 4;  // Master 5 is the one stopped.

// One fresh client's life.
struct FreshSample {
  double create_us = 0;         // Redlock::Create() returned.
  double first_acquire_us = 0;  // From before Create() to Acquire() returning.
  double release_us = 0;        // Release() alone.
  double total_us = 0;      // Create() to the client destroyed (what a process
                            // that takes one lock pays, before it exits).
  MasterVote stopped_vote;  // How master 5 voted on the acquisition.
};

struct FreshCase {
  std::vector<double> create_us, first_acquire_us, release_us, total_us;
  std::vector<double> block_p50;  // First acquisition, one per round.
  int errors = 0;
  std::string last_error;
  // How master 5 voted on the acquisitions (stopped case).
  int64_t stopped_pending = 0, stopped_failed = 0, stopped_answered = 0;
  std::string stopped_example;  // One failed vote's error, for the report.
};

// SIGCONTs the server if it is still stopped when the scope ends.
class ContinueOnExit {
 public:
  explicit ContinueOnExit(testing::RedisServer& server) : server_(server) {}
  ~ContinueOnExit() {
    if (server_.stopped()) (void)server_.Continue();
  }

 private:
  testing::RedisServer& server_;
};

class FreshPhase : public Phase {
 public:
  explicit FreshPhase(bool quick)
      : rounds_(quick ? 3 : absl::GetFlag(FLAGS_fresh_rounds)),
        block_(quick ? 4 : absl::GetFlag(FLAGS_fresh_block)) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.cluster == nullptr) {
      skipped_ =
          "needs masters the harness started (it SIGSTOPs one of them); "
          "not run with --masters";
    } else if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      skipped_ = RunFresh(ctx);
    }
    if (!skipped_.empty()) Log(absl::StrCat("fresh: skipped: ", skipped_));
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["fresh_rounds"] = rounds_;
    settings["fresh_block"] = block_;
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target p50 = Unmeasured(
        "fresh client, one master stopped: first acquisition p50 ≤ 1.3× all "
        "healthy");
    Target p99 = Unmeasured(
        "fresh client, one master stopped: first acquisition p99 ≤ 1.5× all "
        "healthy");
    if (ran_) {
      const Dist s = Summarize(stopped_.first_acquire_us);
      const Dist h = Summarize(healthy_.first_acquire_us);
      const double r50 = Ratio(s.p50, h.p50);
      const double r99 = Ratio(s.p99, h.p99);
      p50 = {p50.what,
             absl::StrFormat("%s (%s vs %s µs; per round %s)", X(r50),
                             Us(s.p50), Us(h.p50), RoundSpread()),
             r50 <= 1.3, true};
      p99 = {p99.what,
             absl::StrFormat("%s (%s vs %s µs)", X(r99), Us(s.p99), Us(h.p99)),
             r99 <= 1.5, true};
    }
    targets.push_back(p50);
    targets.push_back(p99);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) return;
    absl::StrAppend(
        &md, "### First acquisition of a fresh client (N=5)\n\n",
        "What a new process pays for its first lock, as a cron job's "
        "`redlock run` does: `Redlock::Create()` (default options), the first "
        "`Acquire()` (TTL ",
        absl::FormatDuration(ctx.ttl),
        ", one attempt), `Release()`, and the client destroyed. The "
        "deployment was marked by an earlier client, as every run but the "
        "very first finds it. ",
        rounds_, " rounds of ", block_,
        " pairs of fresh clients, one after another: in each pair one with "
        "every master healthy and one with master 5 SIGSTOPped (its TCP "
        "connections are accepted by the kernel; it answers nothing), which "
        "goes first alternating; master 5 is SIGCONTed and answers a PING "
        "before the next client. A round's ratio is that of the medians of "
        "its ",
        block_,
        " clients of each kind. Times in µs from before "
        "`Create()`.\n\n",
        "| masters | clients | first acquire p50 | p90 | p99 | max | "
        "Create() p50 | Release() p50 | whole client p50 | whole client p99 | "
        "errors |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const auto* c : {&healthy_, &stopped_}) {
      const Dist a = Summarize(c->first_acquire_us);
      const Dist t = Summarize(c->total_us);
      absl::StrAppend(
          &md, "| ", c == &healthy_ ? "all healthy" : "master 5 stopped", " | ",
          a.count, " | ", Us(a.p50), " | ", Us(a.p90), " | ", Us(a.p99), " | ",
          Us(a.max), " | ", Us(Median(c->create_us)), " | ",
          Us(Median(c->release_us)), " | ", Us(t.p50), " | ", Us(t.p99), " | ",
          c->errors, " |\n");
    }
    const Dist s = Summarize(stopped_.first_acquire_us);
    const Dist h = Summarize(healthy_.first_acquire_us);
    const Dist st = Summarize(stopped_.total_us);
    const Dist ht = Summarize(healthy_.total_us);
    const int64_t n = std::max<int64_t>(1, stopped_.stopped_pending +
                                               stopped_.stopped_failed +
                                               stopped_.stopped_answered);
    absl::StrAppend(
        &md, "\nRatio stopped/healthy, first acquisition: p50 ",
        X(Ratio(s.p50, h.p50)), ", p99 ", X(Ratio(s.p99, h.p99)),
        "; p50 per round ", RoundSpread(),
        " (min / median / max); whole client: p50 ", X(Ratio(st.p50, ht.p50)),
        ", p99 ", X(Ratio(st.p99, ht.p99)),
        ". The stopped master's vote on the acquisition: pending ",
        absl::StrFormat("%.0f%%", 100.0 * stopped_.stopped_pending / n),
        ", failed ",
        absl::StrFormat("%.0f%%", 100.0 * stopped_.stopped_failed / n),
        stopped_.stopped_example.empty()
            ? ""
            : absl::StrCat(" (\"", stopped_.stopped_example, "\")"),
        ", answered ",
        absl::StrFormat("%.0f%%", 100.0 * stopped_.stopped_answered / n),
        ". Before the library started a new client's first attempt once a "
        "quorum of masters was judged, it waited for every master's handshake "
        "or connect_timeout + 2 × request_timeout (",
        absl::FormatDuration(Options().connect_timeout +
                             2 * Options().request_timeout),
        " with default options) when one was stopped.\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      j["deployment_marked"] = marked_;
      for (const auto* c : {&healthy_, &stopped_}) {
        Json k = Json::object();
        k["first_acquire"] = DistJson(Summarize(c->first_acquire_us));
        k["create"] = DistJson(Summarize(c->create_us));
        k["release"] = DistJson(Summarize(c->release_us));
        k["whole_client"] = DistJson(Summarize(c->total_us));
        k["block_p50_us"] = Nums(c->block_p50);
        k["errors"] = c->errors;
        k["last_error"] = c->last_error;
        if (c == &stopped_) {
          k["stopped_vote_pending"] = c->stopped_pending;
          k["stopped_vote_failed"] = c->stopped_failed;
          k["stopped_vote_answered"] = c->stopped_answered;
          k["stopped_vote_example"] = c->stopped_example;
        }
        j[c == &healthy_ ? "healthy" : "one_stopped"] = std::move(k);
      }
      const Dist s = Summarize(stopped_.first_acquire_us);
      const Dist h = Summarize(healthy_.first_acquire_us);
      j["ratio_p50"] = Num(Ratio(s.p50, h.p50));
      j["ratio_p99"] = Num(Ratio(s.p99, h.p99));
      j["round_ratio_p50"] = Nums(RoundRatios());
      j["whole_client_ratio_p50"] =
          Num(Ratio(Median(stopped_.total_us), Median(healthy_.total_us)));
    }
    results["fresh"] = std::move(j);
  }

 private:
  Options FreshOptions(const Context& ctx) const {
    Options options = ClientOptions(UrisOf(ctx.masters, kMasters), false);
    // A deployment of its own, marked here whichever phases ran before.
    options.key_prefix = absl::StrCat(kKeyPrefix, "fresh:");
    return options;
  }

  // Returns why the phase was skipped, or "" once it ran.
  std::string RunFresh(Context& ctx) {
    testing::RedisServer& victim = ctx.cluster->server(kStoppedIndex);
    ContinueOnExit guard(victim);
    absl::StatusOr<std::unique_ptr<testing::RedisClient>> pinger =
        ctx.cluster->Client(kStoppedIndex);
    if (!pinger.ok()) {
      return absl::StrCat("client to master 5: ", pinger.status().ToString());
    }
    const Options options = FreshOptions(ctx);

    // An earlier client marks the deployment (every master, "trusted").
    {
      absl::StatusOr<std::unique_ptr<Redlock>> setup = Redlock::Create(options);
      if (!setup.ok()) {
        return absl::StrCat("setup client: ", setup.status().ToString());
      }
      absl::StatusOr<Lock> lock =
          (*setup)->Acquire("fresh-setup", ctx.ttl, absl::Seconds(2));
      if (!lock.ok()) {
        return absl::StrCat("setup acquire: ", lock.status().ToString());
      }
      ReleaseOptions all;
      all.wait_for_all_masters = true;
      (void)(*setup)->Release(*lock, all);
      const SteadyTime deadline = Now() + std::chrono::seconds(5);
      while (!marked_ && Now() < deadline) {
        int n = 0;
        for (const MasterHealth& h : (*setup)->Health()) {
          n += absl::StartsWith(h.marker, "trusted");
        }
        marked_ = n == kMasters;
        if (!marked_) absl::SleepFor(absl::Milliseconds(10));
      }
      if (!marked_) return "setup: the deployment marker is not on all 5";
    }

    // Warm-up: a few fresh clients, not counted.
    for (int i = 0; i < 3; ++i) {
      FreshSample sample;
      (void)OneClient(options, ctx.ttl, &sample);
    }
    ran_ = true;
    Log(absl::StrCat("fresh: ", rounds_, " rounds x ", block_,
                     " pairs of fresh clients (all healthy / master 5 "
                     "stopped)"));
    // Pairs, each a healthy client and a stopped-master client back to back
    // (which goes first alternates), so that the machine's swings move both
    // alike; a round's ratio is that of its blocks' medians.
    for (int round = 0; round < rounds_; ++round) {
      std::vector<double> block[2];
      for (int i = 0; i < block_; ++i) {
        for (int which = 0; which < 2; ++which) {
          const bool stop = (which + i + round) % 2 == 1;
          FreshCase& out = stop ? stopped_ : healthy_;
          if (stop) {
            if (absl::Status s = victim.Stop(); !s.ok()) {
              return absl::StrCat("SIGSTOP master 5: ", s.ToString());
            }
          }
          FreshSample sample;
          absl::Status s = OneClient(options, ctx.ttl, &sample);
          if (stop) {
            if (absl::Status c = victim.Continue(); !c.ok()) {
              return absl::StrCat("SIGCONT master 5: ", c.ToString());
            }
            // It answers again (and has taken in the connection queued
            // while it was stopped) before the next client.
            const SteadyTime deadline = Now() + std::chrono::seconds(5);
            while (!(*pinger)->Ping().ok() && Now() < deadline) {
            }
          }
          if (!s.ok()) {
            ++out.errors;
            out.last_error = s.ToString();
            continue;
          }
          out.create_us.push_back(sample.create_us);
          out.first_acquire_us.push_back(sample.first_acquire_us);
          out.release_us.push_back(sample.release_us);
          out.total_us.push_back(sample.total_us);
          block[stop].push_back(sample.first_acquire_us);
          if (stop) {
            switch (sample.stopped_vote.kind) {
              case MasterVote::Kind::kPending:
                ++out.stopped_pending;
                break;
              case MasterVote::Kind::kFailed:
                ++out.stopped_failed;
                if (out.stopped_example.empty()) {
                  out.stopped_example =
                      std::string(sample.stopped_vote.error.message());
                }
                break;
              default:
                ++out.stopped_answered;
            }
          }
        }
      }
      healthy_.block_p50.push_back(Median(block[0]));
      stopped_.block_p50.push_back(Median(block[1]));
    }
    return "";
  }

  // One fresh client: Create, first Acquire, Release, destroyed.
  static absl::Status OneClient(const Options& options, absl::Duration ttl,
                                FreshSample* sample) {
    static int serial = 0;
    // A resource of its own: a release the stopped master never saw cannot
    // leave a key the next client meets there.
    const std::string resource = absl::StrCat("fresh-job-", ++serial);
    const SteadyTime t0 = Now();
    absl::StatusOr<std::unique_ptr<Redlock>> client = Redlock::Create(options);
    if (!client.ok()) return client.status();
    const SteadyTime t1 = Now();
    absl::StatusOr<Lock> lock =
        (*client)->Acquire(resource, ttl, absl::ZeroDuration());
    const SteadyTime t2 = Now();
    if (!lock.ok()) return lock.status();
    absl::StatusOr<ReleaseReport> report = (*client)->Release(*lock);
    const SteadyTime t3 = Now();
    client->reset();
    const SteadyTime t4 = Now();
    if (!report.ok()) return report.status();
    sample->create_us = MicrosBetween(t0, t1);
    sample->first_acquire_us = MicrosBetween(t0, t2);
    sample->release_us = MicrosBetween(t2, t3);
    sample->total_us = MicrosBetween(t0, t4);
    const std::vector<MasterVote> votes = lock->votes();
    if (kStoppedIndex < static_cast<int>(votes.size())) {
      sample->stopped_vote = votes[kStoppedIndex];
    }
    return absl::OkStatus();
  }

  std::vector<double> RoundRatios() const {
    std::vector<double> rr;
    for (size_t r = 0;
         r < stopped_.block_p50.size() && r < healthy_.block_p50.size(); ++r) {
      if (stopped_.block_p50[r] > 0 && healthy_.block_p50[r] > 0) {
        rr.push_back(stopped_.block_p50[r] / healthy_.block_p50[r]);
      }
    }
    return rr;
  }

  std::string RoundSpread() const { return Spread(RoundRatios(), "—"); }

  const int rounds_;
  const int block_;
  bool ran_ = false;
  bool marked_ = false;
  std::string skipped_;
  FreshCase healthy_, stopped_;
};

const RegisterPhase kRegistered(50, "fresh",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<FreshPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
