// Copyright 2026 The redlock Authors.
//
// Fault phase: whole lock cycles (acquire, then the release awaited as a
// user awaits it) with one of five masters behind a FaultProxy adding
// latency each way, interleaved with the same client kind on the same five
// masters without the proxy:
//
//   async,    no fault                AsyncRedlock on the bench thread; the
//   async,    one slow master         release callback has run before the
//   async,    one slow master, wait   next acquire starts
//             for all masters         (ReleaseOptions::wait_for_all_masters)
//   blocking, no fault                Redlock: Acquire() and Release() return
//   blocking, one slow master
//
// The acquisitions are the acquire half of the same cycles (until the
// releases were awaited, this phase sent them without waiting, which hid
// what a release that waits for the slow master costs a caller).
//
// Reports results.json's "fault".

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/async_runner.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/stats.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "redlock/redlock.h"
#include "tests/support/fault_proxy.h"

ABSL_FLAG(int, fault_rounds, 40,
          "Fault phase: interleaved rounds (short blocks: the machine's swings "
          "last longer than a block, and fall on every configuration alike).");
ABSL_FLAG(int, fault_block, 100,
          "Fault phase: cycles per block (each configuration but the one "
          "that waits for every master).");
ABSL_FLAG(int, fault_wait_all_block, 5,
          "Fault phase: cycles per block of the client that waits for every "
          "master on release (each costs the slow master's round trip).");
ABSL_FLAG(absl::Duration, fault_latency, absl::Milliseconds(20),
          "Fault phase: latency the proxy adds in each direction.");

namespace redlock::bench {
namespace {

constexpr int kSlowIndex = 4;  // Master 5 is the slow one.

// One awaited cycle and how the masters voted in it.
struct FaultCycle {
  double acquire_us = 0;
  double cycle_us = 0;
  std::vector<MasterVote> acquire_votes;
  ReleaseReport release;
};

// A client that runs whole cycles: acquire, then release, awaited.
class FaultClient : public Runner {
 public:
  absl::Status Cycle(CycleSample* sample) override {
    FaultCycle c;
    absl::Status s = FullCycle(&c);
    sample->acquire_us = c.acquire_us;
    sample->cycle_us = c.cycle_us;
    return s;
  }
  virtual absl::Status FullCycle(FaultCycle* c) = 0;
};

// AsyncRedlock on the bench thread: the release's callback has run before
// Cycle() returns and the next acquire is sent.
class AsyncFaultClient : public FaultClient {
 public:
  AsyncFaultClient(std::unique_ptr<AsyncRunner> runner, std::string resource,
                   absl::Duration ttl, ReleaseOptions release)
      : runner_(std::move(runner)),
        resource_(std::move(resource)),
        ttl_(ttl),
        release_(release) {}

  absl::Status FullCycle(FaultCycle* c) override {
    AsyncRedlock& client = runner_->client();
    const SteadyTime t0 = Now();
    std::optional<absl::StatusOr<Lock>> lock;
    absl::Status s = client.AcquireAsync(
        resource_, ttl_, absl::ZeroDuration(),
        [&lock](absl::StatusOr<Lock> l) { lock.emplace(std::move(l)); });
    if (!s.ok()) return s;
    if (!RunUntil(
            runner_->base(), [&] { return lock.has_value(); },
            absl::Seconds(5))) {
      return absl::DeadlineExceededError("acquire: no callback in 5s");
    }
    if (!lock->ok()) return lock->status();
    const SteadyTime t1 = Now();
    std::optional<absl::StatusOr<ReleaseReport>> report;
    s = client.ReleaseAsync(**lock, release_,
                            [&report](absl::StatusOr<ReleaseReport> r) {
                              report.emplace(std::move(r));
                            });
    if (!s.ok()) return s;
    if (!RunUntil(
            runner_->base(), [&] { return report.has_value(); },
            absl::Seconds(5))) {
      return absl::DeadlineExceededError("release: no callback in 5s");
    }
    if (!report->ok()) return report->status();
    const SteadyTime t2 = Now();
    c->acquire_us = MicrosBetween(t0, t1);
    c->cycle_us = MicrosBetween(t0, t2);
    c->acquire_votes = (*lock)->votes();
    c->release = **std::move(report);
    return absl::OkStatus();
  }

  // Late replies (the slow master's) are handled while the loop turns.
  void Idle(absl::Duration d) override { runner_->Idle(d); }

 private:
  std::unique_ptr<AsyncRunner> runner_;
  const std::string resource_;
  const absl::Duration ttl_;
  const ReleaseOptions release_;
};

// The blocking Redlock: Acquire() and Release() return.
class BlockingFaultClient : public FaultClient {
 public:
  BlockingFaultClient(std::unique_ptr<Redlock> client, std::string resource,
                      absl::Duration ttl, ReleaseOptions release)
      : client_(std::move(client)),
        resource_(std::move(resource)),
        ttl_(ttl),
        release_(release) {}

  absl::Status FullCycle(FaultCycle* c) override {
    const SteadyTime t0 = Now();
    absl::StatusOr<Lock> lock =
        client_->Acquire(resource_, ttl_, absl::ZeroDuration());
    if (!lock.ok()) return lock.status();
    const SteadyTime t1 = Now();
    absl::StatusOr<ReleaseReport> report = client_->Release(*lock, release_);
    if (!report.ok()) return report.status();
    const SteadyTime t2 = Now();
    c->acquire_us = MicrosBetween(t0, t1);
    c->cycle_us = MicrosBetween(t0, t2);
    c->acquire_votes = lock->votes();
    c->release = *std::move(report);
    return absl::OkStatus();
  }

  int cpu_scope() const override { return RUSAGE_SELF; }

 private:
  std::unique_ptr<Redlock> client_;
  const std::string resource_;
  const absl::Duration ttl_;
  const ReleaseOptions release_;
};

struct FaultConfig {
  std::string name;    // "async, one slow master"
  std::string client;  // async, blocking
  bool slow = false;
  bool wait_all = false;
  int block = 0;
  int baseline = -1;  // Index of the no-fault config of the same client.
  std::unique_ptr<FaultClient> runner;
  Samples samples;
  std::vector<double> block_p50;        // One per round, in round order.
  std::vector<double> round_ratio_p50;  // Block p50 / baseline's, same round.
  int64_t cycles = 0;                   // That succeeded.
  // The slow master's votes (slow configs only).
  int64_t acquire_slow_pending = 0;  // Not in when the acquisition decided.
  int64_t release_slow_pending = 0;  // Not in when the release was delivered.
  int64_t release_slow_failed = 0;   // Timed out (or failed) on release.
  std::vector<double> release_slow_latency_us;  // When it answered in time.
  // The latency of the vote that completed the release's quorum (the third
  // fastest of five), per cycle: what the release waited for.
  std::vector<double> release_quorum_vote_us;
};

class FaultPhase : public Phase {
 public:
  explicit FaultPhase(bool quick)
      : rounds_(quick ? 3 : absl::GetFlag(FLAGS_fault_rounds)),
        block_(quick ? 60 : absl::GetFlag(FLAGS_fault_block)),
        wait_all_block_(quick ? 4 : absl::GetFlag(FLAGS_fault_wait_all_block)),
        latency_(absl::GetFlag(FLAGS_fault_latency)) {}

  absl::Status Run(Context& ctx) override {
    const std::vector<Master>& masters = ctx.masters;
    if (masters.size() < 5) {
      skipped_ = "needs 5 masters";
    } else if (!IsLoopback(masters[kSlowIndex].address.host)) {
      skipped_ = "the proxy only fronts loopback masters";
    } else {
      skipped_ = RunWithProxy(ctx);
    }
    if (!skipped_.empty()) Log(absl::StrCat("fault: skipped: ", skipped_));
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["fault_rounds"] = rounds_;
    settings["fault_block"] = block_;
    settings["fault_wait_all_block"] = wait_all_block_;
    settings["fault_latency_ms"] = Num(absl::ToDoubleMilliseconds(latency_));
  }

  void AddTargets(std::vector<Target>& targets) const override {
    for (const char* client : {"async", "blocking"}) {
      const FaultConfig* slow = Find(client, true, false);
      const FaultConfig* base = slow == nullptr ? nullptr : Baseline(*slow);
      Target p50 = Unmeasured(
          absl::StrCat("one slow master: cycle p50 ≤ 1.3× no-fault cycle p50 (",
                       client, ", release awaited)"));
      Target p99 = Unmeasured(
          absl::StrCat("one slow master: cycle p99 ≤ 1.5× no-fault cycle p99 (",
                       client, ", release awaited)"));
      if (ran_ && slow != nullptr && base != nullptr) {
        const Dist s = Summarize(slow->samples.cycle_us);
        const Dist b = Summarize(base->samples.cycle_us);
        const double r50 = Ratio(s.p50, b.p50);
        const double r99 = Ratio(s.p99, b.p99);
        p50 = {
            p50.what,
            absl::StrFormat("%s (%s vs %s µs; per round %s)", X(r50), Us(s.p50),
                            Us(b.p50), Spread(slow->round_ratio_p50)),
            r50 <= 1.3, true};
        p99 = {
            p99.what,
            absl::StrFormat("%s (%s vs %s µs)", X(r99), Us(s.p99), Us(b.p99)),
            r99 <= 1.5, true};
      }
      targets.push_back(p50);
      targets.push_back(p99);
    }
    Target acq =
        Unmeasured("one slow master: acquire p50 ≤ 1.3× no-fault acquire p50");
    const FaultConfig* slow = Find("async", true, false);
    const FaultConfig* base = slow == nullptr ? nullptr : Baseline(*slow);
    if (ran_ && slow != nullptr && base != nullptr) {
      const Dist s = Summarize(slow->samples.acquire_us);
      const Dist b = Summarize(base->samples.acquire_us);
      const double r = Ratio(s.p50, b.p50);
      acq = {acq.what,
             absl::StrFormat("%s (%s vs %s µs; async, acquire half of the "
                             "awaited cycles)",
                             X(r), Us(s.p50), Us(b.p50)),
             r <= 1.3, true};
    }
    targets.push_back(acq);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) return;
    absl::StrAppend(
        &md, "### Lock cycle with one slow master (N=5, release awaited)\n\n",
        "A FaultProxy in front of master 5 adds ",
        absl::FormatDuration(latency_),
        " each way for the \"one slow master\" clients; the \"no fault\" "
        "clients use the same five masters directly. Every cycle is acquire, "
        "then release awaited as a caller awaits it: AsyncRedlock's release "
        "callback has run before the next acquire is sent (the event_base is "
        "turned by the bench thread), the blocking Redlock's Release() has "
        "returned. The configurations run in ",
        rounds_, " rounds, in an order that rotates from round to round; in ",
        "each a block of ", block_, " cycles (", wait_all_block_,
        " for the client that waits for every master), and after each block "
        "of a slow client that does not wait for it ",
        absl::FormatDuration(2 * latency_ + absl::Milliseconds(20)),
        " untimed, for the slow master's late replies to land before another "
        "block starts. ×no fault "
        "compares a configuration with the no-fault client of the same kind "
        "in the same rounds. Times in µs.\n\n",
        "| configuration | cycles | cycle p50 | p90 | p99 | p99.9 | acquire "
        "p50 | acquire p99 | ×no fault p50 | ×no fault p99 | ×no fault p50 "
        "per round (min / median / max) | errors |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n");
    for (const FaultConfig& c : configs_) {
      const Dist cyc = Summarize(c.samples.cycle_us);
      const Dist acq = Summarize(c.samples.acquire_us);
      const FaultConfig* base = Baseline(c);
      std::string r50, r99;
      if (base != nullptr) {
        const Dist b = Summarize(base->samples.cycle_us);
        r50 = X(Ratio(cyc.p50, b.p50));
        r99 = X(Ratio(cyc.p99, b.p99));
      }
      absl::StrAppend(&md, "| ", c.name, " | ", cyc.count, " | ", Us(cyc.p50),
                      " | ", Us(cyc.p90), " | ", Us(cyc.p99), " | ",
                      Us(cyc.p999), " | ", Us(acq.p50), " | ", Us(acq.p99),
                      " | ", r50, " | ", r99, " | ",
                      base == nullptr ? "" : Spread(c.round_ratio_p50), " | ",
                      c.samples.errors, " |\n");
    }
    absl::StrAppend(&md,
                    "\nThe slow master's votes, and what each release waited "
                    "for (the latency of the vote that completed its quorum, "
                    "the third answer of five):\n\n"
                    "| configuration | slow master pending when the "
                    "acquisition decided | slow master pending when the "
                    "release was delivered | slow master timed out on release "
                    "| slow master's release answer p50 µs | quorum vote p50 "
                    "µs | quorum vote p99 µs |\n"
                    "|---|--:|--:|--:|--:|--:|--:|\n");
    for (const FaultConfig& c : configs_) {
      const Dist q = Summarize(c.release_quorum_vote_us);
      auto pct = [&c](int64_t n) {
        return c.slow
                   ? absl::StrFormat("%.1f%%",
                                     100.0 * n / std::max<int64_t>(1, c.cycles))
                   : std::string("—");
      };
      absl::StrAppend(&md, "| ", c.name, " | ", pct(c.acquire_slow_pending),
                      " | ", pct(c.release_slow_pending), " | ",
                      pct(c.release_slow_failed), " | ",
                      c.slow && !c.release_slow_latency_us.empty()
                          ? Us(Median(c.release_slow_latency_us))
                          : "—",
                      " | ", Us(q.p50), " | ", Us(q.p99), " |\n");
    }
    absl::StrAppend(&md, "\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      j["latency_each_way_ms"] = Num(absl::ToDoubleMilliseconds(latency_));
      j["release_awaited"] = true;
      // The acquire half of the async cycles (the figures this key has
      // always had; until the releases were awaited, acquisitions alone).
      const FaultConfig* slow = Find("async", true, false);
      const FaultConfig* base = slow == nullptr ? nullptr : Baseline(*slow);
      if (slow != nullptr && base != nullptr) {
        const Dist s = Summarize(slow->samples.acquire_us);
        const Dist b = Summarize(base->samples.acquire_us);
        j["acquire_no_fault"] = DistJson(b);
        j["acquire_one_slow"] = DistJson(s);
        j["ratio_p50"] = Num(Ratio(s.p50, b.p50));
        j["ratio_p99"] = Num(Ratio(s.p99, b.p99));
        j["slow_master_pending_fraction"] =
            Num(static_cast<double>(slow->acquire_slow_pending) /
                std::max<int64_t>(1, slow->cycles));
      }
      Json configs = Json::array();
      for (const FaultConfig& c : configs_) {
        Json k = Json::object();
        k["name"] = c.name;
        k["client"] = c.client;
        k["slow_master"] = c.slow;
        k["wait_for_all_masters"] = c.wait_all;
        k["block"] = c.block;
        k["cycle"] = DistJson(Summarize(c.samples.cycle_us));
        k["acquire"] = DistJson(Summarize(c.samples.acquire_us));
        if (const FaultConfig* b = Baseline(c); b != nullptr) {
          const Dist own = Summarize(c.samples.cycle_us);
          const Dist bd = Summarize(b->samples.cycle_us);
          const Dist oa = Summarize(c.samples.acquire_us);
          const Dist ba = Summarize(b->samples.acquire_us);
          k["baseline"] = b->name;
          k["cycle_ratio_p50"] = Num(Ratio(own.p50, bd.p50));
          k["cycle_ratio_p99"] = Num(Ratio(own.p99, bd.p99));
          k["acquire_ratio_p50"] = Num(Ratio(oa.p50, ba.p50));
          k["acquire_ratio_p99"] = Num(Ratio(oa.p99, ba.p99));
          k["round_ratio_p50"] = Nums(c.round_ratio_p50);
        }
        if (c.slow) {
          const double n = std::max<int64_t>(1, c.cycles);
          k["acquire_slow_pending_fraction"] = Num(c.acquire_slow_pending / n);
          k["release_slow_pending_fraction"] = Num(c.release_slow_pending / n);
          k["release_slow_failed_fraction"] = Num(c.release_slow_failed / n);
          k["release_slow_answer"] =
              DistJson(Summarize(c.release_slow_latency_us));
        }
        k["release_quorum_vote"] =
            DistJson(Summarize(c.release_quorum_vote_us));
        k["errors"] = c.samples.errors;
        k["last_error"] = c.samples.last_error;
        configs.push_back(std::move(k));
      }
      j["configs"] = std::move(configs);
      j["proxy_bytes_to_server"] = proxy_.bytes_to_server;
      j["proxy_bytes_to_client"] = proxy_.bytes_to_client;
    }
    results["fault"] = std::move(j);
  }

  void AddCdf(Cdf& cdf) const override {
    for (const FaultConfig& c : configs_) {
      if (c.client != "async") continue;
      cdf.fault.push_back(
          {absl::StrCat("async, ", c.slow ? "one slow master" : "no fault",
                        c.wait_all ? ", waiting for all masters" : "",
                        ": cycle"),
           c.samples.cycle_us});
    }
    for (const FaultConfig& c : configs_) {
      if (c.client != "async" || c.wait_all) continue;
      cdf.fault.push_back(
          {absl::StrCat(c.name, ": acquire"), c.samples.acquire_us});
    }
  }

 private:
  // Returns why the phase was skipped, or "" once it ran.
  std::string RunWithProxy(Context& ctx) {
    const std::vector<Master>& masters = ctx.masters;
    const Master& slow_master = masters[kSlowIndex];
    testing::FaultProxy::Config proxy_config;
    proxy_config.upstream_host = slow_master.address.host == "localhost"
                                     ? "127.0.0.1"
                                     : slow_master.address.host;
    proxy_config.upstream_port = slow_master.address.port;
    absl::StatusOr<std::unique_ptr<testing::FaultProxy>> proxy =
        testing::FaultProxy::Start(proxy_config);
    if (!proxy.ok()) {
      return absl::StrCat("fault proxy: ", proxy.status().ToString());
    }
    std::vector<std::string> slow_uris = UrisOf(masters, kSlowIndex);
    slow_uris.push_back(WithHostPort(
        slow_master.uri, absl::StrCat("127.0.0.1:", (*proxy)->port())));
    const std::vector<std::string> fast_uris = UrisOf(masters, 5);

    struct Spec {
      const char* client;
      bool slow;
      bool wait_all;
    };
    const Spec specs[] = {{"async", false, false},
                          {"async", true, false},
                          {"async", true, true},
                          {"blocking", false, false},
                          {"blocking", true, false}};
    for (const Spec& spec : specs) {
      FaultConfig c;
      c.client = spec.client;
      c.slow = spec.slow;
      c.wait_all = spec.wait_all;
      c.block = spec.wait_all ? wait_all_block_ : block_;
      c.name = absl::StrCat(spec.client, ", ",
                            spec.slow ? "one slow master" : "no fault",
                            spec.wait_all ? ", wait_for_all_masters" : "");
      ReleaseOptions release;
      release.wait_for_all_masters = spec.wait_all;
      const std::string resource =
          absl::StrCat("fault-", spec.client, spec.slow ? "-slow" : "-fast",
                       spec.wait_all ? "-all" : "");
      const redlock::Options options =
          ClientOptions(spec.slow ? slow_uris : fast_uris, false);
      if (c.client == "async") {
        absl::StatusOr<std::unique_ptr<AsyncRunner>> r =
            AsyncRunner::Create(options, resource, ctx.ttl);
        if (!r.ok()) return absl::StrCat(c.name, ": ", r.status().ToString());
        c.runner = std::make_unique<AsyncFaultClient>(*std::move(r), resource,
                                                      ctx.ttl, release);
      } else {
        absl::StatusOr<std::unique_ptr<Redlock>> r = Redlock::Create(options);
        if (!r.ok()) return absl::StrCat(c.name, ": ", r.status().ToString());
        c.runner = std::make_unique<BlockingFaultClient>(
            *std::move(r), resource, ctx.ttl, release);
      }
      configs_.push_back(std::move(c));
    }
    // Each slow configuration is compared with the no-fault client of its
    // kind.
    for (FaultConfig& c : configs_) {
      if (!c.slow) continue;
      for (size_t k = 0; k < configs_.size(); ++k) {
        if (!configs_[k].slow && configs_[k].client == c.client) {
          c.baseline = static_cast<int>(k);
        }
      }
    }
    // Warm up without latency (connections, scripts), then switch it on.
    for (FaultConfig& c : configs_) {
      if (absl::Status s = WarmUp(*c.runner, 20, absl::Seconds(10)); !s.ok()) {
        return absl::StrCat("warm-up of ", c.name, ": ", s.ToString());
      }
    }
    (*proxy)->SetLatency(latency_, latency_);
    for (FaultConfig& c : configs_) {
      if (c.slow) c.runner->Idle(2 * latency_ + absl::Milliseconds(20));
    }
    ran_ = true;
    Log(absl::StrCat("fault: ", configs_.size(), " configurations x ", rounds_,
                     " rounds x ", block_, " cycles (", wait_all_block_,
                     " waiting for all masters), slow master +",
                     absl::FormatDuration(latency_), " each way"));
    for (int round = 0; round < rounds_; ++round) {
      for (size_t k = 0; k < configs_.size(); ++k) {
        RunFaultBlock(configs_[(k + round) % configs_.size()]);
      }
    }
    for (FaultConfig& c : configs_) {
      const FaultConfig* base = Baseline(c);
      if (base == nullptr) continue;
      for (size_t r = 0; r < c.block_p50.size() && r < base->block_p50.size();
           ++r) {
        if (c.block_p50[r] > 0 && base->block_p50[r] > 0) {
          c.round_ratio_p50.push_back(c.block_p50[r] / base->block_p50[r]);
        }
      }
    }
    proxy_ = (*proxy)->counters();
    // The clients go before the proxy (its destructor closes their
    // connections to the slow master).
    for (FaultConfig& c : configs_) c.runner.reset();
    return "";
  }

  void RunFaultBlock(FaultConfig& c) {
    std::vector<double> cycle_us;
    cycle_us.reserve(c.block);
    for (int i = 0; i < c.block; ++i) {
      FaultCycle cyc;
      absl::Status s = c.runner->FullCycle(&cyc);
      if (!s.ok()) {
        ++c.samples.errors;
        c.samples.last_error = s.ToString();
        continue;
      }
      c.samples.acquire_us.push_back(cyc.acquire_us);
      c.samples.cycle_us.push_back(cyc.cycle_us);
      cycle_us.push_back(cyc.cycle_us);
      ++c.cycles;
      Record(c, cyc);
    }
    c.block_p50.push_back(Median(cycle_us));
    // Untimed: the slow master's answers to this block's last requests land
    // now, rather than in the first cycles of the client's next block (async)
    // or during another configuration's block (blocking: its loop thread).
    // A client that waits for every master has none outstanding.
    if (c.slow && !c.wait_all) {
      c.runner->Idle(2 * latency_ + absl::Milliseconds(20));
    }
  }

  void Record(FaultConfig& c, const FaultCycle& cyc) {
    // The release's quorum came with its third answer (of five): the
    // latency of the third fastest vote that is not pending.
    std::vector<double> answered;
    for (const MasterVote& v : cyc.release.votes) {
      if (v.kind != MasterVote::Kind::kPending) {
        answered.push_back(absl::ToDoubleMicroseconds(v.latency));
      }
    }
    std::sort(answered.begin(), answered.end());
    if (answered.size() >= 3) c.release_quorum_vote_us.push_back(answered[2]);
    if (!c.slow) return;
    if (kSlowIndex < static_cast<int>(cyc.acquire_votes.size()) &&
        cyc.acquire_votes[kSlowIndex].kind == MasterVote::Kind::kPending) {
      ++c.acquire_slow_pending;
    }
    if (kSlowIndex < static_cast<int>(cyc.release.votes.size())) {
      const MasterVote& v = cyc.release.votes[kSlowIndex];
      if (v.kind == MasterVote::Kind::kPending) {
        ++c.release_slow_pending;
      } else if (v.kind == MasterVote::Kind::kFailed) {
        ++c.release_slow_failed;
      } else {
        c.release_slow_latency_us.push_back(
            absl::ToDoubleMicroseconds(v.latency));
      }
    }
  }

  const FaultConfig* Find(const std::string& client, bool slow,
                          bool wait_all) const {
    for (const FaultConfig& c : configs_) {
      if (c.client == client && c.slow == slow && c.wait_all == wait_all) {
        return &c;
      }
    }
    return nullptr;
  }

  const FaultConfig* Baseline(const FaultConfig& c) const {
    return c.baseline < 0 ? nullptr : &configs_[c.baseline];
  }

  const int rounds_;
  const int block_;
  const int wait_all_block_;
  const absl::Duration latency_;
  bool ran_ = false;
  std::string skipped_;
  std::vector<FaultConfig> configs_;
  testing::FaultProxy::Counters proxy_;
};

const RegisterPhase kRegistered(20, "fault",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<FaultPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
