// Copyright 2026 The redlock Authors.
//
// many_locks phase (issue 25, target 4): one engine on 5 masters holding K
// locks with KeepAlive, the loop turned by this (the bench) thread. Per
// configuration — K locks at a TTL, batched (the default) or unbatched
// (Engine::set_unbatched_keep_alive_for_testing: one ExtendOp per lock per
// extension, as before batches) — it reports, over a hold window after every
// lock is kept alive:
//   requests per lock-second   EVALSHA + EVAL calls on the masters (INFO
//                              commandstats), / (K * window)
//   lost                       on_lost callbacks and locks lost()
//   client CPU per lock-second getrusage(RUSAGE_THREAD) of this thread, which
//                              runs the loop: every client instruction
//   memory per lock            heap in use (mallinfo2: arenas and mmap()ed
//                              blocks; plus the block pools' slabs) and
//                              RSS, from before
//                              the first acquisition to every lock kept
//                              alive, / K
//   masters' CPU               used_cpu_user + used_cpu_sys of all five, in
//                              cores over the window
//   loop busy                  client CPU / window: how close the loop
//                              thread is to its limit
// The engine is internal::Engine, the one AsyncRedlock wraps (the switch to
// unbatched extension is test-only and not on the public API).
//
// Reports results.json's "many_locks".

#include <event2/event.h>
#include <malloc.h>
#include <sys/resource.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define REDLOCK_HAVE_CALLGRIND_H 1
#else
#define REDLOCK_HAVE_CALLGRIND_H 0
#endif

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
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/master_counters.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/sync_client.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "src/engine/block_pool.h"
#include "src/engine/engine.h"

ABSL_FLAG(int, many_locks_short_k, 50000,
          "many_locks phase: locks at the short TTL (--quick: 2000).");
ABSL_FLAG(int, many_locks_long_k, 100000,
          "many_locks phase: locks at the long TTL (--quick: 4000).");
ABSL_FLAG(int, many_locks_big_k, 200000,
          "many_locks phase: locks of the largest run, long TTL (0: none; "
          "--quick: none).");
ABSL_FLAG(int, many_locks_short_runs, 3,
          "many_locks phase: batched runs at the short TTL (--quick: 1).");
ABSL_FLAG(bool, many_locks_unbatched, true,
          "many_locks phase: also run the unbatched extension (before) at "
          "each K of the short and long TTL, once.");
ABSL_FLAG(absl::Duration, many_locks_request_timeout, absl::Milliseconds(250),
          "many_locks phase: the engine's request timeout (longer under "
          "valgrind, whose slowness would otherwise time extensions out).");

namespace redlock::bench {
namespace {

constexpr absl::Duration kShortTtl = absl::Seconds(3);
constexpr absl::Duration kLongTtl = absl::Seconds(30);
constexpr int kMasters = 5;
constexpr int kInFlight = 500;  // Acquisitions in flight at once.

struct RunSpec {
  int locks = 0;
  absl::Duration ttl;
  bool batched = true;
  absl::Duration hold;
};

struct RunResult {
  RunSpec spec;
  std::string error;
  std::string first_lost;  // The first lost lock's reason.
  int64_t acquired = 0;
  double acquire_s = 0;
  int64_t lost = 0;
  double hold_s = 0;
  int64_t extension_requests = 0;  // evalsha + eval on the masters.
  int64_t commands = 0;            // total_commands_processed.
  int64_t batch_requests = 0;      // The engine's own count.
  double client_cpu_s = 0;
  double client_sys_s = 0;  // Of which in the kernel.
  double masters_cpu_s = 0;
  int64_t heap_bytes = 0;
  int64_t rss_bytes = 0;

  double LockSeconds() const { return acquired * hold_s; }
  double RequestsPerLockS() const {
    return LockSeconds() > 0 ? extension_requests / LockSeconds() : 0;
  }
  double CpuUsPerLockS() const {
    return LockSeconds() > 0 ? client_cpu_s * 1e6 / LockSeconds() : 0;
  }
  double HeapPerLock() const {
    return acquired > 0 ? static_cast<double>(heap_bytes) / acquired : 0;
  }
  double RssPerLock() const {
    return acquired > 0 ? static_cast<double>(rss_bytes) / acquired : 0;
  }
  double LoopBusy() const { return hold_s > 0 ? client_cpu_s / hold_s : 0; }
  double MastersCores() const {
    return hold_s > 0 ? masters_cpu_s / hold_s : 0;
  }
};

// Callgrind's collection on or off; nothing outside valgrind.
void ToggleCallgrind() {
#if REDLOCK_HAVE_CALLGRIND_H
  CALLGRIND_TOGGLE_COLLECT;
#endif
}

// Bytes malloc has handed out: from its arenas (uordblks) and as mmap()ed
// blocks of their own (hblkhd). The large ones — the batcher's heap, the
// engine's set of operations, a batch's vectors — are often the latter,
// which uordblks alone does not count. Plus every slab the engine's block
// pools have mapped (a held lock's state and keep-alive: block_pool.h),
// whole, used or not, which malloc does not see at all.
int64_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd +
                              internal::BlockPool::MappedBytes());
}

absl::StatusOr<MasterCounters> ReadAll(std::vector<ContextPtr>& info) {
  MasterCounters sum;
  for (ContextPtr& c : info) {
    absl::StatusOr<MasterCounters> one = ReadMasterCounters(c.get());
    if (!one.ok()) return one.status();
    sum += *one;
  }
  return sum;
}

// Turns `base` for `d`.
void Turn(event_base* base, absl::Duration d) {
  timeval tv = absl::ToTimeval(d);
  event_base_loopexit(base, &tv);
  event_base_dispatch(base);
}

RunResult RunOne(const std::vector<Master>& masters, const RunSpec& spec,
                 int serial) {
  RunResult r;
  r.spec = spec;
  std::vector<ContextPtr> info;
  for (int i = 0; i < kMasters; ++i) {
    absl::StatusOr<ContextPtr> c = ConnectSync(masters[i].address);
    if (!c.ok()) {
      r.error = c.status().ToString();
      return r;
    }
    info.push_back(*std::move(c));
  }
  malloc_trim(0);
  const int64_t heap0 = HeapInUse();
  const int64_t rss0 = ProcStatusKb("VmRSS");
  event_base* base = event_base_new();
  {
    Options options = ClientOptions(UrisOf(masters, kMasters), false);
    // A 1,000-key batch call (and acquisitions behind 500 others) may take
    // longer than the default 50 ms on a loaded 2-core machine; margin
    // max(ttl / 10, 2 * request_timeout).
    options.request_timeout = absl::GetFlag(FLAGS_many_locks_request_timeout);
    options.stalled_connection_timeout =
        std::max(options.stalled_connection_timeout, options.request_timeout);
    absl::StatusOr<std::unique_ptr<internal::Engine>> made =
        internal::Engine::Create(base, std::move(options));
    if (!made.ok()) {
      event_base_free(base);
      r.error = made.status().ToString();
      return r;
    }
    std::unique_ptr<internal::Engine> engine = *std::move(made);
    engine->set_unbatched_keep_alive_for_testing(!spec.batched);

    // Acquire, kInFlight at a time, each lock kept alive as it is won.
    int64_t lost = 0;
    std::string first_lost;
    std::vector<std::shared_ptr<internal::KeepAliveOp>> kept;
    kept.reserve(spec.locks);
    std::vector<Lock> locks(spec.locks);
    int next = 0, done = 0, failed = 0;
    std::string last_error;
    AcquireOptions acquire;
    acquire.ttl = spec.ttl;
    acquire.wait = absl::Seconds(5);
    std::function<void()> start_one = [&] {
      const int i = next++;
      absl::Status sent = engine->Acquire(
          absl::StrCat("many:", serial, ":", i), acquire,
          [&, i](absl::StatusOr<Lock> lock) {
            ++done;
            if (lock.ok()) {
              locks[i] = *std::move(lock);
              // Kept alive at once, as a holder would: its first extension
              // falls due extend_every after its acquisition.
              HoldOptions hold;
              hold.on_lost = [&lost, &first_lost](const absl::Status& why) {
                if (lost++ == 0) first_lost = why.ToString();
              };
              absl::StatusOr<std::shared_ptr<internal::KeepAliveOp>> op =
                  engine->KeepAlive(locks[i], spec.ttl, std::move(hold));
              if (op.ok()) {
                kept.push_back(*std::move(op));
              } else {
                ++lost;
              }
            } else {
              ++failed;
              last_error = lock.status().ToString();
            }
            if (next < spec.locks) start_one();
          });
      if (!sent.ok()) {
        ++done;
        ++failed;
        last_error = sent.ToString();
      }
    };
    const SteadyTime a0 = Now();
    while (next < std::min(kInFlight, spec.locks)) start_one();
    const absl::Time give_up = absl::Now() + absl::Seconds(120);
    while (done < spec.locks && absl::Now() < give_up) {
      event_base_loop(base, EVLOOP_ONCE);
    }
    r.acquire_s = SecondsBetween(a0, Now());
    r.acquired = done - failed;
    if (done < spec.locks || failed > 0) {
      r.error = absl::StrCat(spec.locks - r.acquired, " of ", spec.locks,
                             " not acquired: ", last_error);
    }

    r.heap_bytes = HeapInUse() - heap0;
    r.rss_bytes = (ProcStatusKb("VmRSS") - rss0) * 1024;

    absl::StatusOr<MasterCounters> m0 = ReadAll(info);
    const Cpu cpu0 = CpuNow(RUSAGE_THREAD);
    const int64_t batch0 = engine->keep_alive_batch_requests_for_testing();
    const SteadyTime t0 = Now();
    // Under valgrind --tool=callgrind --collect-atstart=no, only the hold is
    // counted: the instructions the keep-alive costs.
    ToggleCallgrind();
    Turn(base, spec.hold);
    ToggleCallgrind();
    const SteadyTime t1 = Now();
    const Cpu cpu1 = CpuNow(RUSAGE_THREAD);
    absl::StatusOr<MasterCounters> m1 = ReadAll(info);
    r.hold_s = SecondsBetween(t0, t1);
    r.client_cpu_s = (cpu1 - cpu0).total();
    r.client_sys_s = (cpu1 - cpu0).sys;
    r.batch_requests = engine->keep_alive_batch_requests_for_testing() - batch0;
    int64_t lost_locks = 0;
    for (const Lock& lock : locks) lost_locks += lock.valid() && lock.lost();
    r.lost = std::max(lost, lost_locks);
    r.first_lost = first_lost;
    if (m0.ok() && m1.ok()) {
      MasterCounters d = *m1 - *m0;
      d.RemoveInfo(kMasters);
      r.extension_requests = d.calls["evalsha"] + d.calls["eval"];
      r.commands = d.commands;
      r.masters_cpu_s = d.cpu.total();
    } else if (r.error.empty()) {
      r.error = (m0.ok() ? m1.status() : m0.status()).ToString();
    }
    // No release: 200,000 releases would take longer than the run; the keys
    // expire within a TTL, and every run uses its own resource names.
    for (auto& op : kept) internal::StopKeepAlive(*op, /*release=*/false);
    kept.clear();
    engine.reset();
  }
  event_base_free(base);
  return r;
}

std::string Describe(const RunSpec& s) {
  return absl::StrCat(s.locks, " locks, TTL ", absl::FormatDuration(s.ttl),
                      s.batched ? ", batched" : ", unbatched (before)");
}

class ManyLocksPhase : public Phase {
 public:
  explicit ManyLocksPhase(bool quick) : quick_(quick) {
    const int short_k = quick ? 2000 : absl::GetFlag(FLAGS_many_locks_short_k);
    const int long_k = quick ? 4000 : absl::GetFlag(FLAGS_many_locks_long_k);
    const int big_k = quick ? 0 : absl::GetFlag(FLAGS_many_locks_big_k);
    const int runs = quick ? 1 : absl::GetFlag(FLAGS_many_locks_short_runs);
    const bool unbatched = absl::GetFlag(FLAGS_many_locks_unbatched);
    // Two TTLs at 3 s (six extensions of each lock); 12 s at 30 s (one
    // extension, due 10 s in). --quick: 3 s, and 2 s at 30 s (no extension
    // falls due: memory and idle cost only).
    const absl::Duration short_hold = quick ? absl::Seconds(3) : 2 * kShortTtl;
    const absl::Duration long_hold =
        quick ? absl::Seconds(2) : absl::Seconds(12);
    // The unbatched runs last: at 50,000 locks they overflow connections and
    // leave the masters busy for a while, which would weigh on what follows.
    for (int i = 0; i < runs; ++i) {
      specs_.push_back({short_k, kShortTtl, true, short_hold});
    }
    specs_.push_back({long_k, kLongTtl, true, long_hold});
    if (big_k > 0) specs_.push_back({big_k, kLongTtl, true, long_hold});
    if (unbatched) specs_.push_back({short_k, kShortTtl, false, short_hold});
    if (unbatched) specs_.push_back({long_k, kLongTtl, false, long_hold});
  }

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < static_cast<size_t>(kMasters)) {
      skipped_ = "needs 5 masters";
      return absl::OkStatus();
    }
    ran_ = true;
    int serial = 0;
    for (const RunSpec& spec : specs_) {
      Log(absl::StrCat("many_locks: ", Describe(spec), ", hold ",
                       absl::FormatDuration(spec.hold)));
      results_.push_back(RunOne(ctx.masters, spec, serial++));
      const RunResult& r = results_.back();
      Log(absl::StrFormat(
          "many_locks:   acquired %d in %.1f s, lost %d, %.3g req/lock-s, "
          "%.3g us CPU/lock-s (%.0f%% sys), %.0f B heap/lock, %.0f B RSS/lock, "
          "loop %.0f%%, "
          "masters %.2f cores%s",
          r.acquired, r.acquire_s, r.lost, r.RequestsPerLockS(),
          r.CpuUsPerLockS(),
          r.client_cpu_s > 0 ? 100 * r.client_sys_s / r.client_cpu_s : 0.0,
          r.HeapPerLock(), r.RssPerLock(), 100 * r.LoopBusy(), r.MastersCores(),
          r.error.empty() ? "" : absl::StrCat(" (", r.error, ")")));
      if (!r.first_lost.empty())
        Log("many_locks:   first lost: " + r.first_lost);
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    Json s = Json::array();
    for (const RunSpec& spec : specs_) {
      Json j = Json::object();
      j["locks"] = spec.locks;
      j["ttl_s"] = Num(absl::ToDoubleSeconds(spec.ttl));
      j["batched"] = spec.batched;
      j["hold_s"] = Num(absl::ToDoubleSeconds(spec.hold));
      s.push_back(std::move(j));
    }
    settings["many_locks_runs"] = std::move(s);
  }

  void AddTargets(std::vector<Target>& targets) const override {
    const RunResult* long_run = Find(kLongTtl, true);
    std::vector<const RunResult*> shorts;
    for (const RunResult& r : results_) {
      if (r.spec.ttl == kShortTtl && r.spec.batched) shorts.push_back(&r);
    }
    Target held = Unmeasured(
        "many locks: 50,000 at TTL 3 s held, 0 lost in 3 runs, <= 0.5 "
        "requests per lock-second");
    if (!shorts.empty()) {
      std::string lost_list, rate_list;
      bool ok = true;
      for (const RunResult* r : shorts) {
        absl::StrAppend(&lost_list, lost_list.empty() ? "" : ", ", r->lost);
        absl::StrAppend(&rate_list, rate_list.empty() ? "" : ", ",
                        absl::StrFormat("%.3g", r->RequestsPerLockS()));
        ok &= r->error.empty() && r->lost == 0 && r->RequestsPerLockS() <= 0.5;
      }
      held = {
          held.what,
          absl::StrCat(shorts.size(), " runs of ", shorts[0]->spec.locks,
                       ": lost ", lost_list, "; requests/lock-s ", rate_list),
          ok && shorts.size() >= 3 && shorts[0]->spec.locks >= 50000, true};
    }
    targets.push_back(held);
    Target memory = Unmeasured("many locks: memory per held lock <= 512 B");
    Target cpu = Unmeasured(
        "many locks: client CPU per lock-second at TTL 30 s <= 0.3 us");
    if (long_run != nullptr) {
      memory = {memory.what,
                absl::StrFormat("%.0f B heap, %.0f B RSS per lock (%d locks)",
                                long_run->HeapPerLock(), long_run->RssPerLock(),
                                long_run->acquired),
                long_run->HeapPerLock() <= 512 && long_run->RssPerLock() <= 512,
                true};
      cpu = {cpu.what,
             absl::StrFormat("%.3g us (%d locks, %.0f s)",
                             long_run->CpuUsPerLockS(), long_run->acquired,
                             long_run->hold_s),
             long_run->CpuUsPerLockS() <= 0.3 && !quick_, true};
    }
    targets.push_back(memory);
    targets.push_back(cpu);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "many_locks skipped: ", skipped_, "\n\n");
      }
      return;
    }
    absl::StrAppend(
        &md,
        "### Many locks kept alive (one engine, 5 masters, KeepAlive)\n\n"
        "Requests: EVALSHA + EVAL on the masters (INFO commandstats) over "
        "the hold window; client CPU: getrusage(RUSAGE_THREAD) of the thread "
        "turning the loop; memory: heap in use (mallinfo2) and RSS from "
        "before the first acquisition to every lock kept alive. Unbatched: "
        "one extension request per lock per master (before batches).\n\n"
        "| locks | TTL | extension | acquired | lost | hold s | requests / "
        "lock-s | client CPU µs / lock-s | heap B / lock | RSS B / lock | "
        "loop busy | masters' CPU (cores) |\n"
        "|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const RunResult& r : results_) {
      absl::StrAppend(
          &md,
          absl::StrFormat(
              "| %d | %s | %s | %d | %d | %.1f | %.3g | %.3g | %.0f | %.0f | "
              "%.0f%% | %.2f |\n",
              r.spec.locks, absl::FormatDuration(r.spec.ttl),
              r.spec.batched ? "batched" : "unbatched", r.acquired, r.lost,
              r.hold_s, r.RequestsPerLockS(), r.CpuUsPerLockS(),
              r.HeapPerLock(), r.RssPerLock(), 100 * r.LoopBusy(),
              r.MastersCores()));
    }
    absl::StrAppend(&md, "\n");
    for (const RunResult& r : results_) {
      if (!r.error.empty()) {
        absl::StrAppend(&md, "- ", Describe(r.spec), ": ", r.error, "\n");
      }
    }
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    Json runs = Json::array();
    for (const RunResult& r : results_) {
      Json k = Json::object();
      k["locks"] = r.spec.locks;
      k["ttl_s"] = Num(absl::ToDoubleSeconds(r.spec.ttl));
      k["batched"] = r.spec.batched;
      k["error"] = r.error;
      k["acquired"] = r.acquired;
      k["acquire_s"] = Num(r.acquire_s);
      k["lost"] = r.lost;
      k["first_lost"] = r.first_lost;
      k["hold_s"] = Num(r.hold_s);
      k["extension_requests"] = r.extension_requests;
      k["master_commands"] = r.commands;
      k["batch_requests"] = r.batch_requests;
      k["requests_per_lock_s"] = Num(r.RequestsPerLockS());
      k["client_cpu_us_per_lock_s"] = Num(r.CpuUsPerLockS());
      k["client_sys_share"] =
          Num(r.client_cpu_s > 0 ? r.client_sys_s / r.client_cpu_s : 0);
      k["heap_bytes_per_lock"] = Num(r.HeapPerLock());
      k["rss_bytes_per_lock"] = Num(r.RssPerLock());
      k["loop_busy"] = Num(r.LoopBusy());
      k["masters_cpu_cores"] = Num(r.MastersCores());
      runs.push_back(std::move(k));
    }
    j["runs"] = std::move(runs);
    results["many_locks"] = std::move(j);
  }

 private:
  const RunResult* Find(absl::Duration ttl, bool batched) const {
    for (const RunResult& r : results_) {
      if (r.spec.ttl == ttl && r.spec.batched == batched) return &r;
    }
    return nullptr;
  }

  const bool quick_;
  std::vector<RunSpec> specs_;
  std::vector<RunResult> results_;
  bool ran_ = false;
  std::string skipped_;
};

const RegisterPhase kRegistered(95, "many_locks",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<ManyLocksPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
