// Copyright 2026 The redlock Authors.
//
// redlock-e2e-handoff-contender: one contender of the handoff phase
// (phases/handoff.cc), which starts several of these, each a process with a
// blocking Redlock of its own. It talks to the phase over stdin and stdout
// as handoff_protocol.h describes: reads the masters, connects, says
// "ready", waits for "go", then loops Acquire → hold → Release → think,
// and reports every critical section, with the attempts its acquisition
// made (from an Observer). --kind picks what it takes: a lock (the handoff
// phase), a permit of a semaphore (--limit, --permits) or, for a read-write
// lock, a reader with probability --read_share and a writer otherwise (the
// contended_kinds phase, phases/contended_kinds.cc). Not meant to be run by
// hand.

#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/contender_process.h"
#include "bench/e2e/handoff_protocol.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "redlock/redlock.h"

ABSL_FLAG(int, id, 0, "This contender's number, for messages.");
ABSL_FLAG(std::string, key_prefix, "", "Options::key_prefix.");
ABSL_FLAG(std::string, resource, "handoff", "The contended resource.");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(1), "Lock TTL.");
ABSL_FLAG(absl::Duration, wait, absl::Seconds(2), "Acquire()'s wait budget.");
ABSL_FLAG(absl::Duration, hold, absl::Milliseconds(1),
          "How long each section holds the lock.");
ABSL_FLAG(absl::Duration, think, absl::Milliseconds(5),
          "Pause after each Release() returned.");
ABSL_FLAG(bool, wake_on_release, true, "RetryPolicy::wake_on_release.");
ABSL_FLAG(std::optional<absl::Duration>, wake_jitter, std::nullopt,
          "RetryPolicy::wake_jitter (default: the library's).");
ABSL_FLAG(absl::Duration, connect_budget, absl::Seconds(15),
          "How long to wait for every master before giving up.");
ABSL_FLAG(std::string, kind, "lock",
          "What each section takes: lock, semaphore (--limit, --permits) or "
          "rwlock (a reader with probability --read_share, else a writer).");
ABSL_FLAG(int, limit, 8, "--kind=semaphore: SemaphoreOptions::limit.");
ABSL_FLAG(int, permits, 1, "--kind=semaphore: SemaphoreOptions::permits.");
ABSL_FLAG(double, read_share, 0.9,
          "--kind=rwlock: the probability that a section is a reader's.");

namespace redlock::bench {
namespace {

void Fail(const std::string& what) {
  std::fprintf(stderr, "[handoff contender %d] %s\n", absl::GetFlag(FLAGS_id),
               what.c_str());
}

bool Send(absl::string_view text) {
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
         std::fflush(stdout) == 0;
}

// The client's own counts, summed over the masters.
struct Sent {
  int64_t requests = 0;
  int64_t subscriber_requests = 0;
  int64_t subscriber_messages = 0;
};

Sent SentSoFar(const Redlock& client) {
  Sent n;
  for (const MasterHealth& h : client.Health()) {
    n.requests += h.requests;
    n.subscriber_requests += h.subscriber_requests;
    n.subscriber_messages += h.subscriber_messages;
  }
  return n;
}

// How many attempts the last acquisition of `resource` made, when its
// winning attempt was sent, and when its second attempt lost. The events
// run on the client's loop thread before the blocking Acquire() returns, so
// the caller reads the figures of its own acquisition once Acquire() is
// back (one acquisition at a time per process).
class AttemptsObserver : public Observer {
 public:
  explicit AttemptsObserver(std::string resource)
      : resource_(std::move(resource)) {}

  void OnAttempt(const AttemptEvent& event) override {
    if (event.resource != resource_) return;
    const int64_t now = SteadyNanos(Now());
    if (event.outcome.ok()) {
      won_sent_ns_.store(now - absl::ToInt64Nanoseconds(event.elapsed),
                         std::memory_order_release);
    } else if (event.attempt == 2) {
      marked_ns_.store(now, std::memory_order_release);
    }
  }

  void OnAcquired(const AcquiredEvent& event) override {
    if (event.resource == resource_) {
      last_attempts_.store(event.attempts, std::memory_order_release);
    }
  }

  // The figures of the last acquisition, and 0 in their place, so that a
  // section never shows an earlier acquisition's.
  void TakeLast(HandoffSection* s) {
    s->attempts = last_attempts_.exchange(0, std::memory_order_acq_rel);
    s->won_sent_ns = won_sent_ns_.exchange(0, std::memory_order_acq_rel);
    s->marked_ns = marked_ns_.exchange(0, std::memory_order_acq_rel);
  }
  void Clear() {
    HandoffSection ignored;
    TakeLast(&ignored);
  }

 private:
  const std::string resource_;
  std::atomic<int> last_attempts_{0};
  std::atomic<int64_t> won_sent_ns_{0};
  std::atomic<int64_t> marked_ns_{0};
};

// One acquisition of what --kind says: a lock, a permit set, a reader or a
// writer.
absl::StatusOr<Lock> AcquireOne(Redlock& client, absl::string_view resource,
                                absl::Duration ttl, absl::Duration wait,
                                bool shared) {
  AcquireOptions options;
  options.ttl = ttl;
  options.wait = wait;
  if (absl::GetFlag(FLAGS_kind) == "semaphore") {
    SemaphoreOptions sem;
    sem.limit = absl::GetFlag(FLAGS_limit);
    sem.permits = absl::GetFlag(FLAGS_permits);
    return client.AcquirePermits(resource, sem, options);
  }
  options.shared = shared;
  return client.Acquire(resource, options);
}

// Connected to every master, each one's grants counting, and one lock (on a
// resource of this contender's own) taken and released: from here on the
// contended acquisitions pay for nothing but themselves.
absl::Status WarmUp(Redlock& client, absl::Duration ttl) {
  const std::string resource = absl::StrCat(
      absl::GetFlag(FLAGS_resource), "-warmup-", absl::GetFlag(FLAGS_id));
  const std::string kind = absl::GetFlag(FLAGS_kind);
  return WarmUpClient(
      client, absl::GetFlag(FLAGS_connect_budget), [&]() -> absl::Status {
        // The scripts a kind uses are loaded on their first use: a permit
        // set or a reader is taken once here, and for a read-write lock a
        // writer is refused by that reader and retries once (the writer
        // script).
        absl::StatusOr<Lock> lock =
            AcquireOne(client, resource, ttl, absl::ZeroDuration(),
                       /*shared=*/kind == "rwlock");
        if (!lock.ok()) return lock.status();
        if (kind == "rwlock") {
          client.Acquire(resource, ttl, absl::Milliseconds(30)).IgnoreError();
        }
        return client.Release(*lock).status();
      });
}

ContenderReport Loop(Redlock& client, AttemptsObserver& attempts,
                     SteadyTime end) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  const absl::Duration wait = absl::GetFlag(FLAGS_wait);
  const absl::Duration hold = absl::GetFlag(FLAGS_hold);
  const absl::Duration think = absl::GetFlag(FLAGS_think);
  const double read_share = absl::GetFlag(FLAGS_kind) == "rwlock"
                                ? absl::GetFlag(FLAGS_read_share)
                                : 0.0;
  std::mt19937_64 random(0x5eed0000u + absl::GetFlag(FLAGS_id));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  ContenderReport report;
  report.sections.reserve(4096);
  const Sent sent_before = SentSoFar(client);
  const Cpu cpu_before = CpuNow(RUSAGE_SELF);
  while (Now() < end) {
    const bool shared = uniform(random) < read_share;
    attempts.Clear();
    const SteadyTime called = Now();
    absl::StatusOr<Lock> lock = AcquireOne(client, resource, ttl, wait, shared);
    const SteadyTime acquired = Now();
    HandoffSection section;
    attempts.TakeLast(&section);
    report.waiting_ns += SteadyNanos(acquired) - SteadyNanos(called);
    if (!lock.ok()) {
      ++report.failed_acquisitions;
      report.last_error = lock.status().ToString();
      report.failed_waits.push_back(
          {SteadyNanos(called), SteadyNanos(acquired)});
      continue;
    }
    section.slot = lock->slots().empty() ? -1 : lock->slots().front();
    section.shared = lock->shared();
    absl::SleepFor(hold);
    const SteadyTime release_start = Now();
    absl::StatusOr<ReleaseReport> released = client.Release(*lock);
    const SteadyTime release_end = Now();
    if (!released.ok()) {
      ++report.failed_releases;
      report.last_error = released.status().ToString();
    }
    section.acquire_called_ns = SteadyNanos(called);
    section.acquired_ns = SteadyNanos(acquired);
    section.release_start_ns = SteadyNanos(release_start);
    section.release_end_ns = SteadyNanos(release_end);
    report.sections.push_back(section);
    absl::SleepFor(think);
  }
  report.cpu = CpuNow(RUSAGE_SELF) - cpu_before;
  const Sent sent_after = SentSoFar(client);
  report.requests = sent_after.requests - sent_before.requests;
  report.subscriber_requests =
      sent_after.subscriber_requests - sent_before.subscriber_requests;
  report.subscriber_messages =
      sent_after.subscriber_messages - sent_before.subscriber_messages;
  return report;
}

int Main() {
  absl::StatusOr<std::vector<std::string>> masters = ReadMasters();
  if (absl::IsNotFound(masters.status())) return 0;
  if (!masters.ok()) {
    Fail(std::string(masters.status().message()));
    return 2;
  }
  Options options;
  options.masters = *std::move(masters);
  options.key_prefix = absl::GetFlag(FLAGS_key_prefix);
  options.retry.wake_on_release = absl::GetFlag(FLAGS_wake_on_release);
  auto attempts =
      std::make_shared<AttemptsObserver>(absl::GetFlag(FLAGS_resource));
  options.observer = attempts;
  if (std::optional<absl::Duration> jitter = absl::GetFlag(FLAGS_wake_jitter)) {
    options.retry.wake_jitter = *jitter;
  }
  absl::StatusOr<std::unique_ptr<Redlock>> client = Redlock::Create(options);
  if (!client.ok()) {
    Fail(absl::StrCat("Create: ", client.status().ToString()));
    return 1;
  }
  if (absl::Status s = WarmUp(**client, absl::GetFlag(FLAGS_ttl)); !s.ok()) {
    Fail(absl::StrCat("warm-up: ", s.ToString()));
    return 1;
  }
  if (!Send(absl::StrCat(kHandoffReady, "\n"))) return 1;

  std::string line;
  if (!std::getline(std::cin, line)) return 0;  // The phase gave up.
  int64_t start_ns = 0, end_ns = 0;
  if (absl::Status s = ParseGo(line, &start_ns, &end_ns); !s.ok()) {
    Fail(s.ToString());
    return 2;
  }
  const SteadyTime start = FromSteadyNanos(start_ns);
  while (Now() < start) {
    absl::SleepFor(absl::Microseconds(100));
  }
  const ContenderReport report =
      Loop(**client, *attempts, FromSteadyNanos(end_ns));
  if (!Send(EncodeReport(report))) return 1;

  // Stay connected and idle until the phase has read the masters' counters
  // and closes our stdin, so that tearing the client down is not counted.
  while (std::getline(std::cin, line)) {
  }
  return 0;
}

}  // namespace
}  // namespace redlock::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return redlock::bench::Main();
}
