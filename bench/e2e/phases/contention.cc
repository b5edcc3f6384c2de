// Copyright 2026 The redlock Authors.
//
// Contention phase: blocking clients (8 by default), each with its own
// connections, on one resource.
//
// Reports results.json's "contention".

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
#include "redlock/lock.h"
#include "redlock/redlock.h"

ABSL_FLAG(int, contenders, 8, "Contention phase: clients on one resource.");
ABSL_FLAG(absl::Duration, contention_time, absl::Seconds(6),
          "Contention phase: how long new acquisitions start.");
ABSL_FLAG(absl::Duration, contention_ttl, absl::Seconds(1),
          "Contention phase: lock TTL; each Acquire() may wait twice this.");

namespace redlock::bench {
namespace {

struct Grant {
  SteadyTime acquired;
  SteadyTime release_start;
  SteadyTime release_end;
  int contender;
};

struct ContentionResult {
  bool ran = false;
  std::string skipped;
  int contenders = 0;
  int masters = 0;
  absl::Duration ttl;
  absl::Duration wait;
  double duration_s = 0;
  int64_t cycles = 0;
  int64_t failed = 0;
  std::string last_error;
  std::vector<double> wait_us;  // Successful acquisitions.
  double max_wait_us = 0;       // Any acquisition, failed ones included.
  double max_free_gap_us = 0;
  std::vector<double> free_gap_us;
  int64_t overlaps = 0;
  std::vector<int64_t> per_contender;
};

ContentionResult RunContention(const std::vector<Master>& masters,
                               int contenders, absl::Duration duration,
                               absl::Duration ttl) {
  ContentionResult result;
  result.masters = std::min<int>(5, masters.size());
  result.contenders = contenders;
  result.ttl = ttl;
  result.wait = 2 * ttl;
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int i = 0; i < contenders; ++i) {
    absl::StatusOr<std::unique_ptr<Redlock>> client = Redlock::Create(
        ClientOptions(UrisOf(masters, result.masters), /*relaxed=*/false));
    if (!client.ok()) {
      result.skipped = client.status().ToString();
      return result;
    }
    clients.push_back(*std::move(client));
  }
  // Connections up before the clock starts.
  for (auto& client : clients) {
    for (int tries = 0; tries < 200; ++tries) {
      absl::StatusOr<Lock> lock =
          client->Acquire("contention-warmup", ttl, absl::ZeroDuration());
      if (lock.ok()) {
        client->Release(*lock).IgnoreError();
        break;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  result.ran = true;
  std::vector<std::vector<Grant>> grants(contenders);
  std::vector<std::vector<double>> waits(contenders);
  std::vector<double> max_wait(contenders, 0);
  std::vector<int64_t> failed(contenders, 0);
  std::vector<std::string> errors(contenders);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  SteadyTime start, end;
  std::vector<std::thread> threads;
  for (int c = 0; c < contenders; ++c) {
    threads.emplace_back([&, c] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      while (Now() < end) {
        const SteadyTime t0 = Now();
        absl::StatusOr<Lock> lock =
            clients[c]->Acquire("contended", ttl, result.wait);
        const SteadyTime t1 = Now();
        const double waited = MicrosBetween(t0, t1);
        max_wait[c] = std::max(max_wait[c], waited);
        if (!lock.ok()) {
          ++failed[c];
          errors[c] = lock.status().ToString();
          continue;
        }
        waits[c].push_back(waited);
        const SteadyTime r0 = Now();
        clients[c]->Release(*lock).IgnoreError();
        grants[c].push_back({t1, r0, Now(), c});
      }
    });
  }
  while (ready.load() < contenders) std::this_thread::yield();
  start = Now();
  end = start + absl::ToChronoNanoseconds(duration);
  go.store(true);
  for (std::thread& t : threads) t.join();
  const SteadyTime finished = Now();
  result.duration_s = SecondsBetween(start, finished);

  std::vector<Grant> all;
  for (int c = 0; c < contenders; ++c) {
    all.insert(all.end(), grants[c].begin(), grants[c].end());
    result.wait_us.insert(result.wait_us.end(), waits[c].begin(),
                          waits[c].end());
    result.max_wait_us = std::max(result.max_wait_us, max_wait[c]);
    result.failed += failed[c];
    if (!errors[c].empty()) result.last_error = errors[c];
    result.per_contender.push_back(static_cast<int64_t>(grants[c].size()));
  }
  result.cycles = static_cast<int64_t>(all.size());
  std::sort(all.begin(), all.end(), [](const Grant& a, const Grant& b) {
    return a.acquired < b.acquired;
  });
  for (size_t i = 1; i < all.size(); ++i) {
    // The next holder can only have won after the previous one started to
    // release: anything else means two holders at once.
    if (all[i].acquired < all[i - 1].release_start) ++result.overlaps;
    const double gap = MicrosBetween(all[i - 1].release_end, all[i].acquired);
    result.free_gap_us.push_back(std::max(0.0, gap));
    result.max_free_gap_us = std::max(result.max_free_gap_us, gap);
  }
  return result;
}

class ContentionPhase : public Phase {
 public:
  explicit ContentionPhase(bool quick)
      : contenders_(absl::GetFlag(FLAGS_contenders)),
        time_(quick ? absl::Seconds(1) : absl::GetFlag(FLAGS_contention_time)),
        ttl_(absl::GetFlag(FLAGS_contention_ttl)) {}

  absl::Status Run(Context& ctx) override {
    Log(absl::StrCat("contention: ", contenders_, " clients, ",
                     absl::FormatDuration(time_)));
    result_ = RunContention(ctx.masters, contenders_, time_, ttl_);
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["contenders"] = contenders_;
    settings["contention_time_s"] = Num(absl::ToDoubleSeconds(time_));
    settings["contention_ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
  }

  void AddTargets(std::vector<Target>& targets) const override {
    const ContentionResult& contention = result_;
    Target t = Unmeasured(
        "contention: no contender waits a whole TTL while the lock is free");
    if (contention.ran) {
      const double ttl_us = absl::ToDoubleMicroseconds(contention.ttl);
      t = {t.what,
           absl::StrFormat("longest free gap %s ms, longest wait %s ms, TTL %s",
                           Us(contention.max_free_gap_us / 1000),
                           Us(contention.max_wait_us / 1000),
                           absl::FormatDuration(contention.ttl)),
           contention.max_free_gap_us < ttl_us && contention.overlaps == 0,
           true};
    }
    targets.push_back(t);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    const ContentionResult& contention = result_;
    if (contention.ran) {
      const Dist waits = Summarize(contention.wait_us);
      const Dist gaps = Summarize(contention.free_gap_us);
      int64_t lo = 0, hi = 0;
      if (!contention.per_contender.empty()) {
        lo = *std::min_element(contention.per_contender.begin(),
                               contention.per_contender.end());
        hi = *std::max_element(contention.per_contender.begin(),
                               contention.per_contender.end());
      }
      absl::StrAppend(
          &md, "### Contention (", contention.contenders,
          " blocking clients, own connections, one resource, N=",
          contention.masters, ")\n\n", "Each client loops Acquire(ttl ",
          absl::FormatDuration(contention.ttl), ", wait ",
          absl::FormatDuration(contention.wait), ") → Release for ",
          absl::StrFormat("%.1f", contention.duration_s),
          " s (default retry delay 20–60 ms). \"Free gap\": from one holder's "
          "Release() returning to the next holder's Acquire() returning.\n\n",
          "| cycles | cycles/s | wait p50 ms | wait p99 ms | longest wait ms | "
          "failed acquisitions | free gap p50 ms | longest free gap ms | "
          "overlapping holders | grants per client min–max |\n"
          "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
      absl::StrAppend(
          &md, "| ", contention.cycles, " | ",
          absl::StrFormat("%.0f", contention.cycles / contention.duration_s),
          " | ", Us(waits.p50 / 1000), " | ", Us(waits.p99 / 1000), " | ",
          Us(contention.max_wait_us / 1000), " | ", contention.failed, " | ",
          Us(gaps.p50 / 1000), " | ", Us(contention.max_free_gap_us / 1000),
          " | ", contention.overlaps, " | ", lo, "–", hi, " |\n\n");
    } else if (!contention.skipped.empty()) {
      absl::StrAppend(&md, "Contention skipped: ", contention.skipped, "\n\n");
    }
  }

  void AddResults(Json& results) const override {
    const ContentionResult& contention = result_;
    Json j = Json::object();
    j["ran"] = contention.ran;
    j["skipped"] = contention.skipped;
    if (contention.ran) {
      j["contenders"] = contention.contenders;
      j["masters"] = contention.masters;
      j["ttl_ms"] = Num(absl::ToDoubleMilliseconds(contention.ttl));
      j["wait_budget_ms"] = Num(absl::ToDoubleMilliseconds(contention.wait));
      j["duration_s"] = Num(contention.duration_s);
      j["cycles"] = contention.cycles;
      j["cycles_per_s"] = Num(contention.cycles / contention.duration_s);
      j["failed_acquisitions"] = contention.failed;
      j["last_error"] = contention.last_error;
      j["wait"] = DistJson(Summarize(contention.wait_us));
      j["longest_wait_us"] = Num(contention.max_wait_us);
      j["free_gap"] = DistJson(Summarize(contention.free_gap_us));
      j["longest_free_gap_us"] = Num(contention.max_free_gap_us);
      j["overlapping_holders"] = contention.overlaps;
      j["grants_per_contender"] = contention.per_contender;
    }
    results["contention"] = std::move(j);
  }

 private:
  const int contenders_;
  const absl::Duration time_;
  const absl::Duration ttl_;
  ContentionResult result_;
};

const RegisterPhase kRegistered(40, "contention",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<ContentionPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
