// Copyright 2026 The redlock Authors.
//
// redlock-e2e-thread-contenders: the "ours (threads)" kind of the
// contended_handover phase (phases/contended_handover.cc). One process,
// --contenders threads, each with a blocking Redlock of its own (its own
// loop thread and connections: as many clients as there would be processes)
// looping Acquire(--resource, --ttl, --wait) → hold (--hold; none at 0) →
// Release() with no pause, on one resource.
//
//   phase → process   "masters URI,URI,...\n" (on stdin, not the command
//                     line, where a password would show)
//   process → phase   one JSON line (below), then "done\n"
//   phase → process   end of file: exit
//
// Every client takes and releases a lock on a resource of its own, and is
// connected to every master with its grants counting, before the clock
// starts; then every thread starts acquisitions until --block has passed
// and finishes the one it is in. The JSON line:
//
//   {"grants": G, "failed_acquisitions": F, "failed_releases": R,
//    "last_error": "...", "duration_s": D (first call to last release
//    returned), "cpu_s": C (getrusage(RUSAGE_SELF) over the same span: every
//    thread, the clients' loop threads included), "per_contender": [...],
//    "waits_us": [...] (Acquire() called → returned OK), "gaps_us": [...]
//    (a Release() returned → the next Acquire() returned OK, in any
//    thread, by grant time; negative when the next grant came before the
//    release call returned), "overlaps": O (grants made while another
//    thread held the lock: from its Acquire() returning to its Release()
//    being called), "attempts": A (Observer::OnAttempt on the resource),
//    "handed_over": H (AcquiredEvent::handed_over)}
//
// Options are the library's defaults but for the masters, the key prefix
// (--key_prefix, the harness's namespace) and accept_non_durable_masters
// (the harness's masters do not persist; the warning is not the subject);
// the RetryPolicy is left alone. Not meant to be run by hand.

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/contender_process.h"
#include "bench/e2e/json.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "redlock/redlock.h"

ABSL_FLAG(int, contenders, 8, "Threads, each with a Redlock of its own.");
ABSL_FLAG(std::string, key_prefix, "", "Options::key_prefix.");
ABSL_FLAG(std::string, resource, "contended-handover",
          "The contended resource.");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(10), "Lock TTL.");
ABSL_FLAG(absl::Duration, wait, absl::Seconds(60), "Acquire()'s wait budget.");
ABSL_FLAG(absl::Duration, hold, absl::ZeroDuration(),
          "How long each thread holds the lock (no sleep at 0).");
ABSL_FLAG(absl::Duration, block, absl::Seconds(3),
          "How long new acquisitions start.");
ABSL_FLAG(absl::Duration, connect_budget, absl::Seconds(15),
          "How long a client may take to connect and warm up.");

namespace redlock::bench {
namespace {

void Fail(const std::string& what) {
  std::fprintf(stderr, "[thread contenders] %s\n", what.c_str());
}

// Counts the contended resource's attempts and hand-overs over every client
// (one observer serves them all: each client calls it on its own loop
// thread, hence the atomics). Reset once the warm-up is over.
class CountingObserver : public Observer {
 public:
  explicit CountingObserver(std::string resource)
      : resource_(std::move(resource)) {}

  void OnAttempt(const AttemptEvent& event) override {
    if (event.resource == resource_) {
      attempts_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void OnAcquired(const AcquiredEvent& event) override {
    if (event.resource == resource_ && event.handed_over) {
      handed_over_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void Reset() {
    attempts_.store(0);
    handed_over_.store(0);
  }
  int64_t attempts() const { return attempts_.load(); }
  int64_t handed_over() const { return handed_over_.load(); }

 private:
  const std::string resource_;
  std::atomic<int64_t> attempts_{0};
  std::atomic<int64_t> handed_over_{0};
};

// Connected to every master, each one's grants counting, and one lock on a
// resource of this client's own taken and released: from here on the
// contended acquisitions pay for nothing but themselves.
absl::Status WarmUp(Redlock& client, int id) {
  const std::string resource =
      absl::StrCat(absl::GetFlag(FLAGS_resource), "-warmup-", id);
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  return WarmUpClient(client, absl::GetFlag(FLAGS_connect_budget),
                      [&]() -> absl::Status {
                        absl::StatusOr<Lock> lock =
                            client.Acquire(resource, ttl, absl::ZeroDuration());
                        if (!lock.ok()) return lock.status();
                        return client.Release(*lock).status();
                      });
}

// One grant, in steady-clock time.
struct Section {
  SteadyTime called;
  SteadyTime acquired;
  SteadyTime release_end;
};

// What one thread saw. Written by that thread only; read after join().
struct ThreadReport {
  std::vector<Section> sections;
  int64_t failed_acquisitions = 0;
  int64_t failed_releases = 0;
  std::string last_error;
  SteadyTime last_return;  // The last call this thread returned from.
};

// Holders of the resource right now, by the threads' own account; a thread
// that finds another one there on its grant counts an overlap (must stay 0).
struct Holders {
  std::atomic<int> now{0};
  std::atomic<int64_t> overlaps{0};
};

void Contend(Redlock& client, SteadyTime end, Holders& holders,
             ThreadReport& report) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  const absl::Duration wait = absl::GetFlag(FLAGS_wait);
  const absl::Duration hold = absl::GetFlag(FLAGS_hold);
  report.sections.reserve(8192);
  report.last_return = Now();
  while (Now() < end) {
    Section s;
    s.called = Now();
    absl::StatusOr<Lock> lock = client.Acquire(resource, ttl, wait);
    s.acquired = Now();
    report.last_return = s.acquired;
    if (!lock.ok()) {
      ++report.failed_acquisitions;
      report.last_error = lock.status().ToString();
      continue;
    }
    if (holders.now.fetch_add(1, std::memory_order_acq_rel) != 0) {
      holders.overlaps.fetch_add(1, std::memory_order_relaxed);
    }
    if (hold > absl::ZeroDuration()) absl::SleepFor(hold);
    holders.now.fetch_sub(1, std::memory_order_acq_rel);
    absl::StatusOr<ReleaseReport> released = client.Release(*lock);
    s.release_end = Now();
    report.last_return = s.release_end;
    if (!released.ok()) {
      ++report.failed_releases;
      report.last_error = released.status().ToString();
    }
    report.sections.push_back(s);
  }
}

// The JSON line the header describes.
Json Summary(const std::vector<ThreadReport>& reports, SteadyTime start,
             const Cpu& cpu, const Holders& holders,
             const CountingObserver& observer) {
  std::vector<Section> all;
  Json per_contender = Json::array();
  Json j = Json::object();
  int64_t failed_acquisitions = 0, failed_releases = 0;
  std::string last_error;
  SteadyTime last = start;
  for (const ThreadReport& r : reports) {
    per_contender.push_back(static_cast<int64_t>(r.sections.size()));
    all.insert(all.end(), r.sections.begin(), r.sections.end());
    failed_acquisitions += r.failed_acquisitions;
    failed_releases += r.failed_releases;
    if (!r.last_error.empty()) last_error = r.last_error;
    last = std::max(last, r.last_return);
  }
  std::sort(all.begin(), all.end(), [](const Section& a, const Section& b) {
    return a.acquired < b.acquired;
  });
  Json waits = Json::array();
  Json gaps = Json::array();
  for (size_t i = 0; i < all.size(); ++i) {
    waits.push_back(Num(MicrosBetween(all[i].called, all[i].acquired)));
    if (i > 0) {
      gaps.push_back(
          Num(MicrosBetween(all[i - 1].release_end, all[i].acquired)));
    }
  }
  j["grants"] = static_cast<int64_t>(all.size());
  j["failed_acquisitions"] = failed_acquisitions;
  j["failed_releases"] = failed_releases;
  j["last_error"] = last_error;
  j["duration_s"] = Num(SecondsBetween(start, last));
  j["cpu_s"] = Num(cpu.total());
  j["per_contender"] = std::move(per_contender);
  j["overlaps"] = holders.overlaps.load();
  j["attempts"] = observer.attempts();
  j["handed_over"] = observer.handed_over();
  j["waits_us"] = std::move(waits);
  j["gaps_us"] = std::move(gaps);
  return j;
}

int Main() {
  const absl::StatusOr<std::vector<std::string>> masters = ReadMasters();
  if (absl::IsNotFound(masters.status())) return 0;
  if (!masters.ok()) {
    Fail(std::string(masters.status().message()));
    return 2;
  }
  const int n = absl::GetFlag(FLAGS_contenders);
  if (n < 1) {
    Fail("--contenders must be at least 1");
    return 2;
  }
  auto observer =
      std::make_shared<CountingObserver>(absl::GetFlag(FLAGS_resource));
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int i = 0; i < n; ++i) {
    Options options;
    options.masters = *masters;
    options.key_prefix = absl::GetFlag(FLAGS_key_prefix);
    options.accept_non_durable_masters = true;
    options.observer = observer;
    absl::StatusOr<std::unique_ptr<Redlock>> client = Redlock::Create(options);
    if (!client.ok()) {
      Fail(absl::StrCat("Create: ", client.status().ToString()));
      return 1;
    }
    clients.push_back(*std::move(client));
  }
  for (int i = 0; i < n; ++i) {
    if (absl::Status s = WarmUp(*clients[i], i); !s.ok()) {
      Fail(absl::StrCat("warm-up of client ", i, ": ", s.ToString()));
      return 1;
    }
  }
  observer->Reset();

  Holders holders;
  std::vector<ThreadReport> reports(n);
  std::vector<std::thread> threads;
  const SteadyTime start = Now();
  const SteadyTime end =
      start + absl::ToChronoNanoseconds(absl::GetFlag(FLAGS_block));
  const Cpu cpu_before = CpuNow(RUSAGE_SELF);
  for (int i = 0; i < n; ++i) {
    threads.emplace_back(
        [&, i] { Contend(*clients[i], end, holders, reports[i]); });
  }
  for (std::thread& t : threads) t.join();
  const Cpu cpu = CpuNow(RUSAGE_SELF) - cpu_before;

  const std::string out = absl::StrCat(
      Summary(reports, start, cpu, holders, *observer)
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      "\ndone\n");
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() ||
      std::fflush(stdout) != 0) {
    return 1;
  }
  // Stay until the phase closes our stdin, so that tearing the clients down
  // is never inside anyone's measurement.
  for (std::string line; std::getline(std::cin, line);) {
  }
  return 0;
}

}  // namespace
}  // namespace redlock::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return redlock::bench::Main();
}
