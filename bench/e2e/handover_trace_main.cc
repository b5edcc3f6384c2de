// Copyright 2026 The redlock Authors.
//
// redlock-e2e-handover-trace: where one hand-over of a contended lock goes
// (issue 51, docs/perf-notes/contended-handover.md). --contenders threads,
// each with a blocking Redlock of its own (library defaults), loop
// Acquire("hot", 10 s, wait 60 s) → Release() with no hold, for --seconds.
// Every release call, release return, grant decided on a client's loop
// thread (Observer::OnAcquired) and Acquire() return is stamped; each
// hand-over is cut at them:
//
//   release called  → release returned     the releaser's round trip
//   release called  → heir's quorum        on the heir's loop thread
//   heir's quorum   → heir's Acquire()     its caller thread woken
//   release called  → heir's Acquire()     the whole hand-over
//
// printed as p50 / p90 / p99 in µs. Masters: --masters (comma-separated
// URIs). Not part of scripts/bench.sh: a probe, run by hand.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "redlock/redlock.h"

ABSL_FLAG(std::string, masters, "", "The masters, comma-separated URIs.");
ABSL_FLAG(int, contenders, 8, "Threads, each with a client of its own.");
ABSL_FLAG(absl::Duration, seconds, absl::Seconds(5), "How long to loop.");

namespace {

enum Kind { kReleaseCalled, kReleaseReturned, kQuorum, kAcquireReturned };

struct Stamp {
  int64_t at_ns;
  Kind kind;
  int who;
};

class Stamps {
 public:
  void Add(Kind kind, int who) {
    if (!on_.load()) return;
    const int64_t now = absl::GetCurrentTimeNanos();
    std::lock_guard<std::mutex> lock(mu_);
    stamps_.push_back({now, kind, who});
  }
  void Start() { on_ = true; }
  // Stops stamping; the stamps in time order.
  std::vector<Stamp> Stop() {
    on_ = false;
    std::lock_guard<std::mutex> lock(mu_);
    std::sort(stamps_.begin(), stamps_.end(),
              [](const Stamp& a, const Stamp& b) { return a.at_ns < b.at_ns; });
    return stamps_;
  }

 private:
  std::atomic<bool> on_{false};
  std::mutex mu_;
  std::vector<Stamp> stamps_;
};

Stamps stamps;

class QuorumStamper : public redlock::Observer {
 public:
  explicit QuorumStamper(int who) : who_(who) {}
  void OnAcquired(const redlock::AcquiredEvent& event) override {
    if (event.resource == "hot") stamps.Add(kQuorum, who_);
  }

 private:
  const int who_;
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

void Print(const char* what, const std::vector<double>& us) {
  std::printf("%-40s p50 %6.0f  p90 %6.0f  p99 %6.0f us\n", what,
              Percentile(us, 0.5), Percentile(us, 0.9), Percentile(us, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::vector<std::string> uris =
      absl::StrSplit(absl::GetFlag(FLAGS_masters), ',', absl::SkipEmpty());
  const int n = absl::GetFlag(FLAGS_contenders);
  if (uris.empty() || n < 2) {
    std::fprintf(stderr, "need --masters and --contenders >= 2\n");
    return 2;
  }
  std::vector<std::unique_ptr<redlock::Redlock>> clients;
  for (int i = 0; i < n; ++i) {
    redlock::Options options;
    options.masters = uris;
    options.accept_non_durable_masters = true;
    options.observer = std::make_shared<QuorumStamper>(i);
    auto client = redlock::Redlock::Create(options);
    if (!client.ok()) {
      std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
      return 1;
    }
    clients.push_back(*std::move(client));
    // Connected and judged before the clock starts.
    auto warm =
        clients.back()->Acquire("warm-up", absl::Seconds(5), absl::Seconds(5));
    if (warm.ok()) clients.back()->Release(*warm).IgnoreError();
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  stamps.Start();
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      while (!stop.load()) {
        auto lock =
            clients[i]->Acquire("hot", absl::Seconds(10), absl::Seconds(60));
        if (!lock.ok()) continue;
        stamps.Add(kAcquireReturned, i);
        stamps.Add(kReleaseCalled, i);
        clients[i]->Release(*lock).IgnoreError();
        stamps.Add(kReleaseReturned, i);
      }
    });
  }
  absl::SleepFor(absl::GetFlag(FLAGS_seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  const std::vector<Stamp> all = stamps.Stop();

  // Each release call, then the releaser's return, the next quorum on any
  // loop thread (the heir's) and that heir's Acquire() return.
  std::vector<double> returned, quorum, woken, whole;
  for (size_t k = 0; k < all.size(); ++k) {
    if (all[k].kind != kReleaseCalled) continue;
    const int releaser = all[k].who;
    int64_t ret = -1, heir_quorum = -1, heir_return = -1;
    int heir = -1;
    for (size_t j = k + 1; j < all.size() && heir_return < 0; ++j) {
      if (all[j].kind == kReleaseReturned && all[j].who == releaser &&
          ret < 0) {
        ret = all[j].at_ns;
      }
      if (all[j].kind == kQuorum && heir < 0) {
        heir = all[j].who;
        heir_quorum = all[j].at_ns;
      }
      if (all[j].kind == kAcquireReturned && heir >= 0 && all[j].who == heir) {
        heir_return = all[j].at_ns;
      }
    }
    if (ret < 0 || heir_return < 0) continue;
    const int64_t t0 = all[k].at_ns;
    returned.push_back((ret - t0) / 1e3);
    quorum.push_back((heir_quorum - t0) / 1e3);
    woken.push_back((heir_return - heir_quorum) / 1e3);
    whole.push_back((heir_return - t0) / 1e3);
  }
  std::printf("%zu hand-overs in %s, %d contenders\n", whole.size(),
              absl::FormatDuration(absl::GetFlag(FLAGS_seconds)).c_str(), n);
  Print("release called -> release returned", returned);
  Print("release called -> heir's quorum (loop)", quorum);
  Print("heir's quorum -> heir's Acquire() returned", woken);
  Print("release called -> heir's Acquire() returned", whole);
  return 0;
}
