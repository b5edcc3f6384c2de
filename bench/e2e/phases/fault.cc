// Copyright 2026 The redlock Authors.
//
// Fault phase: acquire latency with one of five masters behind a FaultProxy
// adding latency each way, interleaved with a client that has no slow
// master.
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
#include "absl/time/time.h"
#include "bench/e2e/async_runner.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/stats.h"
#include "redlock/lock.h"
#include "tests/support/fault_proxy.h"

ABSL_FLAG(int, fault_rounds, 16, "Fault phase: interleaved rounds.");
ABSL_FLAG(int, fault_block, 250, "Fault phase: acquisitions per block.");
ABSL_FLAG(absl::Duration, fault_latency, absl::Milliseconds(20),
          "Fault phase: latency the proxy adds in each direction.");

namespace redlock::bench {
namespace {

// Acquires, then releases without waiting for the release (so the slow
// master's 2x latency on the release does not pace the loop); Drain() waits
// for every release before the other client runs.
class OpenLoopAcquirer {
 public:
  OpenLoopAcquirer(std::unique_ptr<AsyncRunner> runner, std::string resource,
                   absl::Duration ttl, int slow_index)
      : runner_(std::move(runner)),
        resource_(std::move(resource)),
        ttl_(ttl),
        slow_index_(slow_index) {}

  absl::Status Acquire(double* us, bool* slow_pending) {
    const SteadyTime t0 = Now();
    std::optional<absl::StatusOr<Lock>> lock;
    absl::Status s = runner_->client().AcquireAsync(
        resource_, ttl_, absl::ZeroDuration(),
        [&lock](absl::StatusOr<Lock> l) { lock.emplace(std::move(l)); });
    if (!s.ok()) return s;
    if (!RunUntil(
            runner_->base(), [&] { return lock.has_value(); },
            absl::Seconds(5))) {
      return absl::DeadlineExceededError("acquire: no callback in 5s");
    }
    if (!lock->ok()) return lock->status();
    *us = MicrosBetween(t0, Now());
    if (slow_index_ >= 0) {
      std::vector<MasterVote> votes = (*lock)->votes();
      *slow_pending = slow_index_ < static_cast<int>(votes.size()) &&
                      votes[slow_index_].kind == MasterVote::Kind::kPending;
    }
    ++outstanding_;
    s = runner_->client().ReleaseAsync(
        **lock, [this](absl::StatusOr<ReleaseReport>) { --outstanding_; });
    if (!s.ok()) --outstanding_;
    return absl::OkStatus();
  }

  bool Drain() {
    return RunUntil(
        runner_->base(), [this] { return outstanding_ == 0; },
        absl::Seconds(10));
  }

  AsyncRunner& runner() { return *runner_; }

 private:
  std::unique_ptr<AsyncRunner> runner_;
  const std::string resource_;
  const absl::Duration ttl_;
  const int slow_index_;
  int outstanding_ = 0;
};

class FaultPhase : public Phase {
 public:
  explicit FaultPhase(bool quick)
      : rounds_(quick ? 3 : absl::GetFlag(FLAGS_fault_rounds)),
        block_(quick ? 60 : absl::GetFlag(FLAGS_fault_block)),
        latency_(absl::GetFlag(FLAGS_fault_latency)) {}

  absl::Status Run(Context& ctx) override {
    const std::vector<Master>& masters = ctx.masters;
    const int available = static_cast<int>(masters.size());
    const absl::Duration ttl = ctx.ttl;
    if (available < 5) {
      skipped_ = "needs 5 masters";
    } else if (!IsLoopback(masters[4].address.host)) {
      skipped_ = "the proxy only fronts loopback masters";
    } else {
      testing::FaultProxy::Config proxy_config;
      proxy_config.upstream_host = masters[4].address.host == "localhost"
                                       ? "127.0.0.1"
                                       : masters[4].address.host;
      proxy_config.upstream_port = masters[4].address.port;
      absl::StatusOr<std::unique_ptr<testing::FaultProxy>> proxy =
          testing::FaultProxy::Start(proxy_config);
      if (!proxy.ok()) {
        skipped_ = absl::StrCat("fault proxy: ", proxy.status().ToString());
      } else {
        std::vector<std::string> slow_uris = UrisOf(masters, 4);
        slow_uris.push_back(WithHostPort(
            masters[4].uri, absl::StrCat("127.0.0.1:", (*proxy)->port())));
        absl::StatusOr<std::unique_ptr<AsyncRunner>> slow_runner =
            AsyncRunner::Create(ClientOptions(slow_uris, false), "slow", ttl);
        absl::StatusOr<std::unique_ptr<AsyncRunner>> fast_runner =
            AsyncRunner::Create(ClientOptions(UrisOf(masters, 5), false),
                                "fast", ttl);
        if (!slow_runner.ok() || !fast_runner.ok()) {
          skipped_ = absl::StrCat("clients: ", slow_runner.status().ToString(),
                                  " ", fast_runner.status().ToString());
        } else {
          // Warm up without latency, then switch it on.
          absl::Status w1 = WarmUp(**slow_runner, 20, absl::Seconds(10));
          absl::Status w2 = WarmUp(**fast_runner, 20, absl::Seconds(10));
          (*proxy)->SetLatency(latency_, latency_);
          OpenLoopAcquirer slow(*std::move(slow_runner), "slow-open", ttl, 4);
          OpenLoopAcquirer fast(*std::move(fast_runner), "fast-open", ttl, -1);
          if (!w1.ok() || !w2.ok()) {
            skipped_ =
                absl::StrCat("warm-up: ", w1.ToString(), " ", w2.ToString());
          } else {
            ran_ = true;
            Log(absl::StrCat("fault: ", rounds_, " rounds x ", block_,
                             " acquisitions, slow master +",
                             absl::FormatDuration(latency_), " each way"));
            for (int round = 0; round < rounds_; ++round) {
              std::vector<double> p50(2);
              for (int which = 0; which < 2; ++which) {
                // Alternate which client goes first.
                const bool is_slow = (which + round) % 2 == 0;
                OpenLoopAcquirer& client = is_slow ? slow : fast;
                Samples& out = is_slow ? fault_ : nofault_;
                std::vector<double> block;
                for (int i = 0; i < block_; ++i) {
                  double us = 0;
                  bool pending = false;
                  absl::Status s = client.Acquire(&us, &pending);
                  if (!s.ok()) {
                    ++out.errors;
                    out.last_error = s.ToString();
                    continue;
                  }
                  block.push_back(us);
                  if (is_slow) {
                    ++fault_acquisitions_;
                    slow_pending_ += pending;
                  }
                }
                if (!client.Drain()) {
                  ++out.errors;
                  out.last_error = "releases did not finish in 10s";
                }
                out.acquire_us.insert(out.acquire_us.end(), block.begin(),
                                      block.end());
                p50[is_slow ? 0 : 1] = Median(block);
              }
              if (p50[1] > 0) round_ratio_p50_.push_back(p50[0] / p50[1]);
            }
            proxy_ = (*proxy)->counters();
          }
        }
      }
    }
    if (!skipped_.empty()) Log(absl::StrCat("fault: skipped: ", skipped_));
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["fault_rounds"] = rounds_;
    settings["fault_block"] = block_;
    settings["fault_latency_ms"] = Num(absl::ToDoubleMilliseconds(latency_));
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target t =
        Unmeasured("one slow master: acquire p50 ≤ 1.3× no-fault acquire p50");
    if (ran_) {
      const Dist fault_acq = Summarize(fault_.acquire_us);
      const Dist nofault_acq = Summarize(nofault_.acquire_us);
      const double r = Ratio(fault_acq.p50, nofault_acq.p50);
      t = {t.what,
           absl::StrFormat("%s (%s vs %s µs)", X(r), Us(fault_acq.p50),
                           Us(nofault_acq.p50)),
           r <= 1.3, true};
    }
    targets.push_back(t);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) return;
    const Dist fault_acq = Summarize(fault_.acquire_us);
    const Dist nofault_acq = Summarize(nofault_.acquire_us);
    std::vector<double> rr = round_ratio_p50_;
    std::sort(rr.begin(), rr.end());
    absl::StrAppend(
        &md, "### Acquire with one slow master (N=5)\n\n",
        "A FaultProxy in front of master 5 adds ",
        absl::FormatDuration(latency_),
        " each way for one client; another client with the same five masters "
        "and no proxy runs in alternating blocks of ",
        block_,
        " acquisitions (AsyncRedlock on the bench thread; each release is sent "
        "without waiting for it, and drained at the end of the block). Times "
        "in µs.\n\n",
        "| client | acquisitions | p50 | p90 | p99 | p99.9 | errors |\n"
        "|---|--:|--:|--:|--:|--:|--:|\n");
    absl::StrAppend(&md, "| no fault | ", nofault_acq.count, " | ",
                    Us(nofault_acq.p50), " | ", Us(nofault_acq.p90), " | ",
                    Us(nofault_acq.p99), " | ", Us(nofault_acq.p999), " | ",
                    nofault_.errors, " |\n");
    absl::StrAppend(&md, "| one slow master | ", fault_acq.count, " | ",
                    Us(fault_acq.p50), " | ", Us(fault_acq.p90), " | ",
                    Us(fault_acq.p99), " | ", Us(fault_acq.p999), " | ",
                    fault_.errors, " |\n");
    absl::StrAppend(
        &md, "\nRatio slow/no-fault: p50 ",
        X(Ratio(fault_acq.p50, nofault_acq.p50)), ", p99 ",
        X(Ratio(fault_acq.p99, nofault_acq.p99)),
        rr.empty() ? ""
                   : absl::StrCat("; p50 per round ", X(rr.front()), " / ",
                                  X(Median(rr)), " / ", X(rr.back()),
                                  " (min / median / max)"),
        ". The slow master had not answered when the decision was made in ",
        absl::StrFormat(
            "%.1f%%",
            100.0 * slow_pending_ / std::max<int64_t>(1, fault_acquisitions_)),
        " of the acquisitions.\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      const Dist fault_acq = Summarize(fault_.acquire_us);
      const Dist nofault_acq = Summarize(nofault_.acquire_us);
      j["latency_each_way_ms"] = Num(absl::ToDoubleMilliseconds(latency_));
      j["acquire_no_fault"] = DistJson(nofault_acq);
      j["acquire_one_slow"] = DistJson(fault_acq);
      j["ratio_p50"] = Num(Ratio(fault_acq.p50, nofault_acq.p50));
      j["ratio_p99"] = Num(Ratio(fault_acq.p99, nofault_acq.p99));
      j["round_ratio_p50"] = Nums(round_ratio_p50_);
      j["slow_master_pending_fraction"] =
          Num(static_cast<double>(slow_pending_) /
              std::max<int64_t>(1, fault_acquisitions_));
      j["errors_no_fault"] = nofault_.errors;
      j["errors_one_slow"] = fault_.errors;
      j["last_error"] = fault_.last_error + nofault_.last_error;
      j["proxy_bytes_to_server"] = proxy_.bytes_to_server;
      j["proxy_bytes_to_client"] = proxy_.bytes_to_client;
    }
    results["fault"] = std::move(j);
  }

  void AddCdf(Cdf& cdf) const override {
    cdf.acquire.push_back({"N=5, no fault", nofault_.acquire_us});
    cdf.acquire.push_back(
        {absl::StrCat("N=5, one master +", absl::FormatDuration(latency_),
                      " each way"),
         fault_.acquire_us});
  }

 private:
  const int rounds_;
  const int block_;
  const absl::Duration latency_;
  bool ran_ = false;
  std::string skipped_;
  Samples fault_, nofault_;
  std::vector<double> round_ratio_p50_;
  int64_t slow_pending_ = 0;
  int64_t fault_acquisitions_ = 0;
  testing::FaultProxy::Counters proxy_;
};

const RegisterPhase kRegistered(20, "fault",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<FaultPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
