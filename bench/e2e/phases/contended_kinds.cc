// Copyright 2026 The redlock Authors.
//
// Contended kinds phase: a counting semaphore and a read-write lock under
// contention, each beside a contended plain lock in the same run. Contender
// processes (redlock-e2e-handoff-contender, as in the handoff phase: each a
// blocking Redlock with its own connections, default options, so waiters
// are woken on release) loop Acquire → hold → Release (awaited) → think at
// N=5 on one name:
//
//   lock       8 processes on one lock (the handoff phase's shape);
//   semaphore  16 processes on a semaphore of limit 8, 1 permit each;
//   rwlock     8 processes on one read-write lock, each section a reader
//              with probability 0.9, else a writer.
//
// Each round runs one block of each (the order rotating by round), each
// block with fresh processes connected before its clock starts. Every
// figure comes from the contenders' own reports (steady-clock times of each
// acquisition's call and return and of each release's call and return,
// the slot a permit holds, the attempts from an Observer) and from the
// masters' INFO before and after each block.
//
// Reports results.json's "contended_kinds".

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/contender_block.h"
#include "bench/e2e/handoff_protocol.h"
#include "bench/e2e/json.h"
#include "bench/e2e/master_counters.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/stats.h"
#include "bench/e2e/sync_client.h"
#include "redlock/options.h"

ABSL_FLAG(int, ck_rounds, 4,
          "Contended kinds phase: rounds of one lock, one semaphore and one "
          "read-write lock block.");
ABSL_FLAG(absl::Duration, ck_block, absl::Milliseconds(2500),
          "Contended kinds phase: how long new acquisitions start in each "
          "block.");
ABSL_FLAG(absl::Duration, ck_hold, absl::Milliseconds(10),
          "Contended kinds phase: how long each section holds.");
ABSL_FLAG(absl::Duration, ck_think, absl::Milliseconds(5),
          "Contended kinds phase: pause after each Release() returned.");
ABSL_FLAG(absl::Duration, ck_ttl, absl::Seconds(1),
          "Contended kinds phase: TTL of every lock, permit and reader.");
ABSL_FLAG(absl::Duration, ck_wait, absl::Seconds(2),
          "Contended kinds phase: each acquisition's wait budget.");
ABSL_FLAG(int, ck_lock_contenders, 8,
          "Contended kinds phase: processes on the plain lock.");
ABSL_FLAG(int, ck_sem_contenders, 16,
          "Contended kinds phase: processes on the semaphore.");
ABSL_FLAG(int, ck_sem_limit, 8,
          "Contended kinds phase: the semaphore's limit.");
ABSL_FLAG(int, ck_rw_contenders, 8,
          "Contended kinds phase: processes on the read-write lock.");
ABSL_FLAG(absl::Duration, ck_long_hold, absl::Milliseconds(100),
          "Contended kinds phase: the hold of the semaphore_long blocks (they "
          "think half of it).");
ABSL_FLAG(double, ck_read_share, 0.9,
          "Contended kinds phase: share of the read-write lock's sections "
          "that are readers'.");

// Defined in phases/handoff.cc: the same contender binary serves both.
ABSL_DECLARE_FLAG(std::string, handoff_contender_binary);

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;

// kSemaphoreLong: the same semaphore and processes, each section holding
// --ck_long_hold (and thinking half that): how many permits are in use when
// a hold is long against a release and a hand-off.
enum Kind { kLock = 0, kSemaphore = 1, kRwLock = 2, kSemaphoreLong = 3 };
constexpr const char* kKindNames[] = {"lock", "semaphore", "rwlock",
                                      "semaphore_long"};
constexpr int kKinds = 4;

struct TimedSection {
  HandoffSection s;
  int contender = 0;
};

// Everything the blocks of one kind reported, with their windows.
struct KindData {
  std::vector<std::vector<TimedSection>> blocks;     // Sections, by block.
  std::vector<std::vector<FailedWait>> failed;       // Failed waits, by block.
  std::vector<std::pair<int64_t, int64_t>> windows;  // [start, last end] ns.
  int64_t sections = 0;
  int64_t failed_acquisitions = 0;
  int64_t failed_releases = 0;
  std::string last_error;
  double duration_s = 0;
  MasterCounters masters;
  Cpu contenders_cpu;
  int64_t client_requests = 0;
  int64_t subscriber_requests = 0;
  int64_t messages_heard = 0;

  double PerSection(double x) const { return sections > 0 ? x / sections : 0; }
  double RequestsPerGrant() const {
    return PerSection(client_requests + subscriber_requests);
  }
  double CommandsPerGrant() const { return PerSection(masters.commands); }
  double ContenderCpuUs() const {
    return PerSection(contenders_cpu.total() * 1e6);
  }
};

// A step function's integral by a sweep over interval ends.
struct Sweep {
  double weighted_s = 0;  // ∫ value dt over the times counted.
  double counted_s = 0;   // The times counted.
  int max_value = 0;
};

// `holds`: intervals adding 1 to the value; `gate`: intervals during which
// the time counts (all of the window if `gate` is null).
Sweep Integrate(const std::vector<std::pair<int64_t, int64_t>>& holds,
                const std::vector<std::pair<int64_t, int64_t>>* gate,
                int64_t window_start, int64_t window_end) {
  struct Event {
    int64_t t;
    int hold;
    int gate;
  };
  std::vector<Event> ev;
  for (const auto& [a, b] : holds) {
    if (b <= a) continue;
    ev.push_back({a, +1, 0});
    ev.push_back({b, -1, 0});
  }
  if (gate != nullptr) {
    for (const auto& [a, b] : *gate) {
      if (b <= a) continue;
      ev.push_back({a, 0, +1});
      ev.push_back({b, 0, -1});
    }
  }
  // Ends before starts at the same instant: a release and the next grant at
  // one nanosecond are not two holders.
  std::sort(ev.begin(), ev.end(), [](const Event& x, const Event& y) {
    if (x.t != y.t) return x.t < y.t;
    return x.hold + x.gate < y.hold + y.gate;
  });
  Sweep out;
  int hold = 0, open = 0;
  int64_t prev = window_start;
  for (const Event& e : ev) {
    const int64_t t = std::clamp(e.t, window_start, window_end);
    if (t > prev && (gate == nullptr || open > 0)) {
      out.weighted_s += hold * (t - prev) / 1e9;
      out.counted_s += (t - prev) / 1e9;
    }
    prev = std::max(prev, t);
    hold += e.hold;
    open += e.gate;
    out.max_value = std::max(out.max_value, hold);
  }
  if (window_end > prev && (gate == nullptr || open > 0)) {
    out.weighted_s += hold * (window_end - prev) / 1e9;
    out.counted_s += (window_end - prev) / 1e9;
  }
  return out;
}

// Hand-offs along one sequence of holders of one thing (the lock, or one
// slot of the semaphore), sorted by acquisition.
struct Handoffs {
  std::vector<double> gap_us;         // Next acquired - previous release end.
  std::vector<double> waiter_gap_us;  // The same, to a waiter (attempts ≥ 2).
  int64_t overlaps = 0;  // Acquired before the previous release began.
  int64_t same_again = 0;
};

void AddHandoffs(std::vector<TimedSection> seq, Handoffs& h) {
  std::sort(seq.begin(), seq.end(),
            [](const TimedSection& a, const TimedSection& b) {
              return a.s.acquired_ns < b.s.acquired_ns;
            });
  for (size_t i = 1; i < seq.size(); ++i) {
    const HandoffSection& prev = seq[i - 1].s;
    const HandoffSection& next = seq[i].s;
    if (next.acquired_ns < prev.release_start_ns) ++h.overlaps;
    const double gap = (next.acquired_ns - prev.release_end_ns) / 1e3;
    h.gap_us.push_back(gap);
    if (next.attempts >= 2) h.waiter_gap_us.push_back(gap);
    if (seq[i].contender == seq[i - 1].contender) ++h.same_again;
  }
}

// What the analysis of each kind gives.
struct LockFigures {
  Handoffs handoffs;
  std::vector<double> wait_us;
  double mean_waiting = 0;  // Processes inside Acquire(), on average.
  // While some process waits: the share of the time the lock is held, and
  // being released (release called, not returned).
  double held_contended = 0;
  double releasing_contended = 0;
};

struct SemaphoreFigures {
  Handoffs handoffs;  // Per slot.
  std::vector<double> wait_us;
  double mean_in_use_contended = 0;     // While some process waits.
  double mean_releasing_contended = 0;  // Release called, not returned.
  double contended_share = 0;           // Share of the window with a waiter.
  double mean_in_use = 0;               // Over the whole window.
  int max_in_use = 0;
  int64_t no_slot = 0;  // Sections whose Lock had no slot (must be 0).
  double mean_waiting = 0;
};

struct RwFigures {
  int64_t readers = 0, writers = 0;
  std::vector<double> reader_wait_us, writer_wait_us;
  double mean_readers = 0;         // Over the whole window.
  double mean_readers_inside = 0;  // While at least one reader is inside.
  int max_readers = 0;
  int64_t reader_with_writer = 0;  // Pairs overlapping (must be 0).
  int64_t writer_with_writer = 0;
  // Readers whose winning attempt was sent after a writer's waiting mark
  // was set (its second attempt lost) and before that writer's grant.
  int64_t readers_past_mark = 0;
  // Of those, the ones after another writer's grant that came between the
  // mark and the reader's attempt: the waiting key holds one writer's id,
  // so a second waiting writer overwrites it, and that writer's acquisition
  // deletes it when it ends (compare-and-delete of its own id) although
  // the first still waits, until the first's next attempt marks it again.
  int64_t readers_past_mark_after_other_writer = 0;
  // How long after the mark each such reader's attempt was sent.
  std::vector<double> past_mark_margin_us;
  int64_t marked_writers = 0;
  // Writers with no other writer's grant inside their wait, and their
  // waits; every writer's wait against its own bound.
  std::vector<double> lone_writer_wait_us;
  int64_t writers_over_bound = 0;
  double worst_over_bound_ms = 0;
};

std::string Ms(double us) { return Us(us / 1000); }

class ContendedKindsPhase : public Phase {
 public:
  explicit ContendedKindsPhase(bool quick)
      : rounds_(quick ? 1 : absl::GetFlag(FLAGS_ck_rounds)),
        block_(quick ? absl::Milliseconds(700) : absl::GetFlag(FLAGS_ck_block)),
        hold_(absl::GetFlag(FLAGS_ck_hold)),
        think_(absl::GetFlag(FLAGS_ck_think)),
        long_hold_(absl::GetFlag(FLAGS_ck_long_hold)),
        ttl_(absl::GetFlag(FLAGS_ck_ttl)),
        wait_(absl::GetFlag(FLAGS_ck_wait)),
        contenders_{absl::GetFlag(FLAGS_ck_lock_contenders),
                    absl::GetFlag(FLAGS_ck_sem_contenders),
                    absl::GetFlag(FLAGS_ck_rw_contenders),
                    absl::GetFlag(FLAGS_ck_sem_contenders)},
        limit_(absl::GetFlag(FLAGS_ck_sem_limit)),
        read_share_(absl::GetFlag(FLAGS_ck_read_share)),
        max_delay_(RetryPolicy{}.max_delay) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      skipped_ = RunAll(ctx);
    }
    if (!skipped_.empty()) {
      Log(absl::StrCat("contended kinds: skipped: ", skipped_));
    } else {
      Analyse();
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["ck_rounds"] = rounds_;
    settings["ck_block_s"] = Num(absl::ToDoubleSeconds(block_));
    settings["ck_hold_ms"] = Num(absl::ToDoubleMilliseconds(hold_));
    settings["ck_think_ms"] = Num(absl::ToDoubleMilliseconds(think_));
    settings["ck_long_hold_ms"] = Num(absl::ToDoubleMilliseconds(long_hold_));
    settings["ck_ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
    settings["ck_wait_ms"] = Num(absl::ToDoubleMilliseconds(wait_));
    settings["ck_lock_contenders"] = contenders_[kLock];
    settings["ck_sem_contenders"] = contenders_[kSemaphore];
    settings["ck_sem_limit"] = limit_;
    settings["ck_rw_contenders"] = contenders_[kRwLock];
    settings["ck_read_share"] = Num(read_share_);
  }

  void AddTargets(std::vector<Target>& targets) const override {
    const std::string sem =
        absl::StrCat("semaphore (limit ", limit_, ", ", contenders_[kSemaphore],
                     " processes)");
    Target in_use = Unmeasured(absl::StrCat(
        sem, ": permits in use while contended ≥ 7.5 on average (hold ",
        absl::FormatDuration(hold_), ")"));
    Target in_use_long = Unmeasured(absl::StrCat(
        sem, ": permits in use while contended ≥ 7.5 on average (hold ",
        absl::FormatDuration(long_hold_), ")"));
    Target handoff =
        Unmeasured(absl::StrCat(sem, ": hand-off to a waiter, median ≤ 2 ms"));
    Target requests = Unmeasured(
        absl::StrCat(sem, ": requests per grant ≤ 1.5× a contended lock's (",
                     contenders_[kLock], " processes)"));
    Target limit = Unmeasured(
        absl::StrCat(sem, ": never more than ", limit_,
                     " holders at once, no slot held twice at once"));
    const std::string rw =
        absl::StrCat("read-write lock (", contenders_[kRwLock], " processes, ",
                     absl::StrFormat("%.0f/%.0f", 100 * read_share_,
                                     100 - 100 * read_share_),
                     " read/write)");
    Target readers = Unmeasured(absl::StrCat(rw, ": mean readers inside > 1"));
    Target bound = Unmeasured(absl::StrCat(
        rw,
        ": writer wait p99 within the queueing bound (writers with no "
        "other writer granted during their wait)"));
    Target exclusion = Unmeasured(absl::StrCat(
        rw, ": no reader beside a writer, no two writers at once"));
    Target queueing = Unmeasured(
        absl::StrCat(rw, ": no reader admitted past a waiting writer's mark"));
    if (ran_) {
      const KindData& sd = data_[kSemaphore];
      const KindData& ld = data_[kLock];
      const double in_use_x = sem_.mean_in_use_contended;
      in_use = {in_use.what,
                absl::StrFormat(
                    "%.2f of %d, %.2f more being released (contended %.0f%% "
                    "of the time); the contended lock in the same run: held "
                    "%.2f of the time, being released %.2f",
                    in_use_x, limit_, sem_.mean_releasing_contended,
                    100 * sem_.contended_share, lock_.held_contended,
                    lock_.releasing_contended),
                in_use_x >= 7.5, true};
      in_use_long = {
          in_use_long.what,
          absl::StrFormat("%.2f of %d, %.2f more being released (contended "
                          "%.0f%% of the time; hand-off to a waiter p50 %s ms)",
                          sem_long_.mean_in_use_contended, limit_,
                          sem_long_.mean_releasing_contended,
                          100 * sem_long_.contended_share,
                          Ms(Median(sem_long_.handoffs.waiter_gap_us))),
          sem_long_.mean_in_use_contended >= 7.5, true};
      const double hp50 = Median(sem_.handoffs.waiter_gap_us);
      handoff = {handoff.what,
                 absl::StrFormat(
                     "%s ms over %d hand-offs to a waiter (all hand-offs %s "
                     "ms; the lock's to a waiter %s ms)",
                     Ms(hp50), sem_.handoffs.waiter_gap_us.size(),
                     Ms(Median(sem_.handoffs.gap_us)),
                     Ms(Median(lock_.handoffs.waiter_gap_us))),
                 !sem_.handoffs.waiter_gap_us.empty() && hp50 <= 2000, true};
      const double rr = Ratio(sd.RequestsPerGrant(), ld.RequestsPerGrant());
      requests = {
          requests.what,
          absl::StrFormat("%s (%.2f vs %.2f; masters' commands %.2f "
                          "vs %.2f)",
                          X(rr), sd.RequestsPerGrant(), ld.RequestsPerGrant(),
                          sd.CommandsPerGrant(), ld.CommandsPerGrant()),
          sd.sections > 0 && ld.sections > 0 && rr <= 1.5, true};
      limit = {limit.what,
               absl::StrFormat("at most %d at once; %d slot overlaps; %d "
                               "permits without a slot",
                               sem_.max_in_use, sem_.handoffs.overlaps,
                               sem_.no_slot),
               sem_.max_in_use <= limit_ && sem_.handoffs.overlaps == 0 &&
                   sem_.no_slot == 0,
               true};
      readers = {readers.what,
                 absl::StrFormat("%.2f (%.2f while any reader is inside; at "
                                 "most %d)",
                                 rw_.mean_readers, rw_.mean_readers_inside,
                                 rw_.max_readers),
                 rw_.mean_readers > 1, true};
      const Dist lone = Summarize(rw_.lone_writer_wait_us);
      const Dist all = Summarize(rw_.writer_wait_us);
      bound = {
          bound.what,
          absl::StrFormat(
              "p99 %s ms vs the bound %s ms (%d such writers; all %d "
              "writers: p50 %s, p99 %s ms, %d over their own bound by "
              "at most %.1f ms)",
              Ms(lone.p99), Ms(BoundUs(0)), lone.count, all.count, Ms(all.p50),
              Ms(all.p99), rw_.writers_over_bound, rw_.worst_over_bound_ms),
          lone.count > 0 && lone.p99 <= BoundUs(0), true};
      exclusion = {
          exclusion.what,
          absl::StrFormat("%d reader/writer overlaps, %d writer/writer "
                          "(holders' own intervals)",
                          rw_.reader_with_writer, rw_.writer_with_writer),
          rw_.reader_with_writer == 0 && rw_.writer_with_writer == 0, true};
      queueing = {
          queueing.what,
          absl::StrFormat(
              "%d readers past a mark (%d of them after another "
              "writer's grant; sent %s ms after the mark at the "
              "median; %d writers marked)",
              rw_.readers_past_mark, rw_.readers_past_mark_after_other_writer,
              Ms(Median(rw_.past_mark_margin_us)), rw_.marked_writers),
          rw_.readers_past_mark == 0, true};
    }
    for (Target* t : {&in_use, &in_use_long, &handoff, &requests, &limit,
                      &readers, &bound, &exclusion, &queueing}) {
      targets.push_back(*t);
    }
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "Contended kinds skipped: ", skipped_, "\n\n");
      }
      return;
    }
    absl::StrAppend(
        &md,
        "### Contended semaphore and read-write lock, beside a contended "
        "lock (processes, own connections, N=",
        kMasters, ")\n\n",
        "Contender processes (`redlock-e2e-handoff-contender --kind=...`, "
        "each a blocking `Redlock` with default options, so waiters are "
        "woken on release) loop acquire (ttl ",
        absl::FormatDuration(ttl_), ", wait ", absl::FormatDuration(wait_),
        ") → hold ", absl::FormatDuration(hold_),
        " → release (awaited) → think ", absl::FormatDuration(think_),
        ". **lock**: ", contenders_[kLock],
        " processes on one lock; **semaphore**: ", contenders_[kSemaphore],
        " processes on a semaphore of limit ", limit_,
        ", 1 permit each (`AcquirePermits`); **rwlock**: ",
        contenders_[kRwLock],
        " processes on one read-write lock, each "
        "section a reader (`AcquireOptions::shared`) with probability ",
        absl::StrFormat("%.2f", read_share_),
        ", else a writer (`Acquire`); "
        "**semaphore_long**: the semaphore's blocks again with hold ",
        absl::FormatDuration(long_hold_), " and think ",
        absl::FormatDuration(long_hold_ / 2), ". ", rounds_, " rounds of one ",
        absl::FormatDuration(block_),
        " block of each kind (the order rotating), each block with fresh "
        "processes connected before its clock starts. A holder's interval is "
        "its own, from its acquisition returning to its release being "
        "called (steady clock, shared by the processes); a waiter's from its "
        "acquisition's call to its return. \"Requests per grant\": what the "
        "clients sent (`MasterHealth::requests` + `subscriber_requests`, "
        "their own counts over the loop) over the successful acquisitions; "
        "\"masters' commands\" counts the commands inside scripts too "
        "(`total_commands_processed` deltas, our INFO taken off).\n\n",
        "| kind | grants | grants/s | requests per grant | masters' commands "
        "per grant | contenders' CPU µs per grant | acquire wait p50 ms | p99 "
        "ms | failed acquisitions | commands by name, per grant |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    const std::vector<double>* waits[kKinds] = {
        &lock_.wait_us, &sem_.wait_us, &all_rw_wait_us_, &sem_long_.wait_us};
    for (int k = 0; k < kKinds; ++k) {
      const KindData& d = data_[k];
      const Dist w = Summarize(*waits[k]);
      absl::StrAppend(
          &md, "| ", kKindNames[k], " | ", d.sections, " | ",
          absl::StrFormat("%.0f | %.2f | %.2f", Ratio(d.sections, d.duration_s),
                          d.RequestsPerGrant(), d.CommandsPerGrant()),
          " | ", Us(d.ContenderCpuUs()), " | ", Ms(w.p50), " | ", Ms(w.p99),
          " | ", d.failed_acquisitions, " | ", CallsPerGrant(d), " |\n");
    }
    const KindData& sd = data_[kSemaphore];
    const KindData& ld = data_[kLock];
    absl::StrAppend(
        &md, "| semaphore ÷ lock | | | ",
        X(Ratio(sd.RequestsPerGrant(), ld.RequestsPerGrant())), " | ",
        X(Ratio(sd.CommandsPerGrant(), ld.CommandsPerGrant())), " | ",
        X(Ratio(sd.ContenderCpuUs(), ld.ContenderCpuUs())), " | | | | |\n\n");

    const Dist lg = Summarize(lock_.handoffs.gap_us);
    const Dist lwg = Summarize(lock_.handoffs.waiter_gap_us);
    absl::StrAppend(
        &md,
        "Hand-offs: along each slot of the semaphore (a permit's first "
        "slot, `Lock::slots()`) and along the lock, from one holder's release "
        "returning to the next holder's acquisition returning (negative when "
        "it won before the release returned); \"to a waiter\": the next "
        "holder's acquisition made 2 or more attempts "
        "(`AcquiredEvent::attempts`). \"Permits in use\": the holders' "
        "intervals summed and divided by the time counted; \"while "
        "contended\" counts only the time at least one process was inside an "
        "acquisition.\n\n",
        "| kind | waiting (mean processes inside acquire) | in use while "
        "contended | being released while contended | contended share of the "
        "time | in use over the blocks | "
        "most at once | hand-offs | p50 ms | p99 ms | to a waiter | to a "
        "waiter p50 ms | p90 ms | p99 ms | same process again | overlaps |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    absl::StrAppend(
        &md, "| lock | ", absl::StrFormat("%.1f", lock_.mean_waiting), " | ",
        absl::StrFormat("%.2f of 1 | %.2f", lock_.held_contended,
                        lock_.releasing_contended),
        " | | | 1 | ", lg.count, " | ", Ms(lg.p50), " | ", Ms(lg.p99), " | ",
        lwg.count, " | ", Ms(lwg.p50), " | ", Ms(lwg.p90), " | ", Ms(lwg.p99),
        " | ", lock_.handoffs.same_again, " | ", lock_.handoffs.overlaps,
        " |\n");
    for (Kind k : {kSemaphore, kSemaphoreLong}) {
      const SemaphoreFigures& f = k == kSemaphore ? sem_ : sem_long_;
      const Dist g = Summarize(f.handoffs.gap_us);
      const Dist wg = Summarize(f.handoffs.waiter_gap_us);
      absl::StrAppend(
          &md, "| ", kKindNames[k], " | ",
          absl::StrFormat("%.1f", f.mean_waiting), " | ",
          absl::StrFormat("%.2f of %d | %.2f | %.0f%% | %.2f | %d",
                          f.mean_in_use_contended, limit_,
                          f.mean_releasing_contended, 100 * f.contended_share,
                          f.mean_in_use, f.max_in_use),
          " | ", g.count, " | ", Ms(g.p50), " | ", Ms(g.p99), " | ", wg.count,
          " | ", Ms(wg.p50), " | ", Ms(wg.p90), " | ", Ms(wg.p99), " | ",
          f.handoffs.same_again, " | ", f.handoffs.overlaps, " |\n");
    }
    absl::StrAppend(&md, "\n");

    const Dist rw_r = Summarize(rw_.reader_wait_us);
    const Dist rw_w = Summarize(rw_.writer_wait_us);
    const Dist lone = Summarize(rw_.lone_writer_wait_us);
    absl::StrAppend(
        &md,
        "Read-write lock. The queueing rule (docs/notes/rwlock-notes.md, \"The "
        "bound on queueing\"): a writer's retries (from its second attempt) "
        "mark it waiting, and from then no new reader is admitted until the "
        "writer's acquisition ends (or its TTL after its last attempt, if it "
        "dies). So a writer waits for the readers already inside, and for "
        "other writers. With these settings that bounds a writer's wait, "
        "leaving out the attempts' round trips and scheduling, by B(k) = "
        "2 × retry max delay (",
        absl::FormatDuration(max_delay_),
        ": to its marking second attempt, and to its next attempt once the "
        "readers inside are gone, if no wake-up comes first) + one reader "
        "hold (",
        absl::FormatDuration(hold_),
        ": the readers inside drain) + k × (writer hold + retry max delay), "
        "k being the other writers granted during its wait. B(0) = ",
        Ms(BoundUs(0)),
        " ms. \"Past a mark\": readers whose winning attempt was sent after "
        "a writer's second attempt was decided and lost, and before that "
        "writer's grant (from each process's observer).\n\n",
        "| sections | readers | writers | mean readers inside | while any "
        "inside | most at once | reader wait p50 / p99 ms | writer wait p50 "
        "/ p99 / max ms | writers with no other writer during their wait: "
        "wait p50 / p99 / max ms (count) | B(0) ms | writers over their B(k) "
        "| readers past a mark | reader/writer overlaps | the lock's wait "
        "(all writers) p50 / p99 ms |\n"
        "|--:|--:|--:|--:|--:|--:|---|---|---|--:|--:|--:|--:|---|\n");
    const Dist lw = Summarize(lock_.wait_us);
    absl::StrAppend(&md, "| ", rw_.readers + rw_.writers, " | ", rw_.readers,
                    " | ", rw_.writers, " | ",
                    absl::StrFormat("%.2f | %.2f | %d", rw_.mean_readers,
                                    rw_.mean_readers_inside, rw_.max_readers),
                    " | ", Ms(rw_r.p50), " / ", Ms(rw_r.p99), " | ",
                    Ms(rw_w.p50), " / ", Ms(rw_w.p99), " / ", Ms(rw_w.max),
                    " | ", Ms(lone.p50), " / ", Ms(lone.p99), " / ",
                    Ms(lone.max), " (", lone.count, ") | ", Ms(BoundUs(0)),
                    " | ", rw_.writers_over_bound, " of ", rw_.writers, " | ",
                    rw_.readers_past_mark, " | ",
                    rw_.reader_with_writer + rw_.writer_with_writer, " | ",
                    Ms(lw.p50), " / ", Ms(lw.p99), " |\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      j["masters"] = kMasters;
      j["ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
      j["wait_budget_ms"] = Num(absl::ToDoubleMilliseconds(wait_));
      j["hold_ms"] = Num(absl::ToDoubleMilliseconds(hold_));
      j["think_ms"] = Num(absl::ToDoubleMilliseconds(think_));
      j["retry_max_delay_ms"] = Num(absl::ToDoubleMilliseconds(max_delay_));
      for (int k = 0; k < kKinds; ++k) {
        const KindData& d = data_[k];
        Json x = Json::object();
        x["contenders"] = contenders_[k];
        x["grants"] = d.sections;
        x["duration_s"] = Num(d.duration_s);
        x["grants_per_s"] = Num(Ratio(d.sections, d.duration_s));
        x["failed_acquisitions"] = d.failed_acquisitions;
        x["failed_releases"] = d.failed_releases;
        x["last_error"] = d.last_error;
        x["requests_per_grant"] = Num(d.RequestsPerGrant());
        x["subscriber_requests_per_grant"] =
            Num(d.PerSection(d.subscriber_requests));
        x["messages_heard_per_grant"] = Num(d.PerSection(d.messages_heard));
        x["commands_per_grant"] = Num(d.CommandsPerGrant());
        Json calls = Json::object();
        for (const auto& [name, n] : d.masters.calls) {
          calls[name] = Num(d.PerSection(n));
        }
        x["calls_per_grant"] = std::move(calls);
        x["contenders_cpu_us_per_grant"] = Num(d.ContenderCpuUs());
        x["masters_cpu_us_per_grant"] =
            Num(d.PerSection(d.masters.cpu.total() * 1e6));
        if (k == kLock) {
          x["acquire_wait"] = DistJson(Summarize(lock_.wait_us));
          x["mean_waiting"] = Num(lock_.mean_waiting);
          x["held_share_while_contended"] = Num(lock_.held_contended);
          x["being_released_share_while_contended"] =
              Num(lock_.releasing_contended);
          HandoffsJson(lock_.handoffs, x);
        } else if (k == kSemaphore || k == kSemaphoreLong) {
          const SemaphoreFigures& sem_f = k == kSemaphore ? sem_ : sem_long_;
          x["limit"] = limit_;
          x["permits"] = 1;
          x["hold_ms"] =
              Num(absl::ToDoubleMilliseconds(Hold(static_cast<Kind>(k))));
          x["think_ms"] =
              Num(absl::ToDoubleMilliseconds(Think(static_cast<Kind>(k))));
          x["acquire_wait"] = DistJson(Summarize(sem_f.wait_us));
          x["mean_waiting"] = Num(sem_f.mean_waiting);
          x["permits_in_use_while_contended"] =
              Num(sem_f.mean_in_use_contended);
          x["permits_being_released_while_contended"] =
              Num(sem_f.mean_releasing_contended);
          x["contended_share"] = Num(sem_f.contended_share);
          x["permits_in_use"] = Num(sem_f.mean_in_use);
          x["most_permits_in_use"] = sem_f.max_in_use;
          x["permits_without_slot"] = sem_f.no_slot;
          HandoffsJson(sem_f.handoffs, x);
        } else {
          x["read_share"] = Num(read_share_);
          x["readers"] = rw_.readers;
          x["writers"] = rw_.writers;
          x["mean_readers_inside"] = Num(rw_.mean_readers);
          x["mean_readers_while_any_inside"] = Num(rw_.mean_readers_inside);
          x["most_readers_at_once"] = rw_.max_readers;
          x["reader_wait"] = DistJson(Summarize(rw_.reader_wait_us));
          x["writer_wait"] = DistJson(Summarize(rw_.writer_wait_us));
          x["lone_writer_wait"] = DistJson(Summarize(rw_.lone_writer_wait_us));
          x["bound_b0_ms"] = Num(BoundUs(0) / 1000);
          x["writers_over_bound"] = rw_.writers_over_bound;
          x["worst_over_bound_ms"] = Num(rw_.worst_over_bound_ms);
          x["readers_past_a_mark"] = rw_.readers_past_mark;
          x["readers_past_a_mark_after_another_writers_grant"] =
              rw_.readers_past_mark_after_other_writer;
          x["past_mark_margin"] = DistJson(Summarize(rw_.past_mark_margin_us));
          x["marked_writers"] = rw_.marked_writers;
          x["reader_writer_overlaps"] = rw_.reader_with_writer;
          x["writer_writer_overlaps"] = rw_.writer_with_writer;
        }
        j[kKindNames[k]] = std::move(x);
      }
      const KindData& sd = data_[kSemaphore];
      const KindData& ld = data_[kLock];
      j["semaphore_requests_per_grant_to_lock"] =
          Num(Ratio(sd.RequestsPerGrant(), ld.RequestsPerGrant()));
      j["semaphore_commands_per_grant_to_lock"] =
          Num(Ratio(sd.CommandsPerGrant(), ld.CommandsPerGrant()));
    }
    results["contended_kinds"] = std::move(j);
  }

 private:
  absl::Duration Hold(Kind k) const {
    return k == kSemaphoreLong ? long_hold_ : hold_;
  }
  absl::Duration Think(Kind k) const {
    return k == kSemaphoreLong ? long_hold_ / 2 : think_;
  }

  // B(k) in µs.
  double BoundUs(int64_t k) const {
    return absl::ToDoubleMicroseconds(2 * max_delay_ + hold_ +
                                      k * (hold_ + max_delay_));
  }

  static void HandoffsJson(const Handoffs& h, Json& x) {
    x["handoff"] = DistJson(Summarize(h.gap_us));
    x["handoff_to_waiter"] = DistJson(Summarize(h.waiter_gap_us));
    x["same_process_again"] = h.same_again;
    x["overlapping_holders"] = h.overlaps;
  }

  static std::string CallsPerGrant(const KindData& d) {
    std::vector<std::pair<int64_t, std::string>> by_count;
    for (const auto& [name, n] : d.masters.calls) by_count.push_back({n, name});
    std::sort(by_count.rbegin(), by_count.rend());
    std::vector<std::string> parts;
    for (const auto& [n, name] : by_count) {
      parts.push_back(absl::StrFormat("%s %.2f", name, d.PerSection(n)));
    }
    return parts.empty() ? "—" : absl::StrJoin(parts, ", ");
  }

  // Returns why the phase did not run, or "" once it ran.
  std::string RunAll(Context& ctx) {
    binary_ = absl::GetFlag(FLAGS_handoff_contender_binary);
    if (binary_.empty()) {
      binary_ = absl::StrCat(SelfDirectory(), "/redlock-e2e-handoff-contender");
    }
    if (access(binary_.c_str(), X_OK) != 0) {
      return absl::StrCat("no contender binary at ", binary_);
    }
    std::vector<ContextPtr> info;
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<ContextPtr> c = ConnectSync(ctx.masters[i].address);
      if (!c.ok()) {
        return absl::StrCat("INFO connection: ", c.status().ToString());
      }
      info.push_back(*std::move(c));
    }
    Log(absl::StrCat("contended kinds: ", rounds_,
                     " rounds x (lock, semaphore, rwlock, semaphore_long) "
                     "blocks of ",
                     absl::FormatDuration(block_)));
    for (int round = 0; round < rounds_; ++round) {
      for (int j = 0; j < kKinds; ++j) {
        const Kind kind = static_cast<Kind>((j + round) % kKinds);
        if (absl::Status s = RunBlock(ctx, info, kind); !s.ok()) {
          return absl::StrCat("round ", round + 1, ", ", kKindNames[kind], ": ",
                              s.ToString());
        }
      }
      Log(absl::StrCat("contended kinds round ", round + 1, "/", rounds_));
    }
    ran_ = true;
    return "";
  }

  absl::Status RunBlock(const Context& ctx, std::vector<ContextPtr>& info,
                        Kind kind) {
    const Options options = ClientOptions(UrisOf(ctx.masters, kMasters), false);
    const std::string resource = absl::StrCat("contended-", kKindNames[kind]);
    std::vector<std::vector<std::string>> args;
    for (int i = 0; i < contenders_[kind]; ++i) {
      args.push_back({
          absl::StrCat("--id=", i),
          absl::StrCat("--key_prefix=", options.key_prefix),
          absl::StrCat("--resource=", resource),
          absl::StrCat("--ttl=", absl::FormatDuration(ttl_)),
          absl::StrCat("--wait=", absl::FormatDuration(wait_)),
          absl::StrCat("--hold=", absl::FormatDuration(Hold(kind))),
          absl::StrCat("--think=", absl::FormatDuration(Think(kind))),
          absl::StrCat("--kind=",
                       kind == kSemaphoreLong ? "semaphore" : kKindNames[kind]),
          absl::StrCat("--limit=", limit_),
          "--permits=1",
          absl::StrCat("--read_share=", read_share_),
      });
    }
    ContenderBlockSpec spec;
    spec.binary = binary_;
    spec.args = args;
    spec.masters = options.masters;
    spec.go_delay = absl::Milliseconds(5);
    spec.block = block_;
    spec.report_grace = 2 * wait_ + absl::Seconds(10);
    absl::StatusOr<ContenderBlock> run = RunContenderBlock(spec, info);
    if (!run.ok()) return run.status();
    const SteadyTime start = run->start;
    const SteadyTime end = run->end;
    const std::vector<std::string>& reports = run->reports;
    KindData& d = data_[kind];
    d.masters += run->masters;
    std::vector<TimedSection> sections;
    std::vector<FailedWait> failed;
    int64_t last = SteadyNanos(end);
    for (int i = 0; i < contenders_[kind]; ++i) {
      absl::StatusOr<ContenderReport> r = ParseReport(reports[i]);
      if (!r.ok()) return r.status();
      for (const HandoffSection& s : r->sections) {
        sections.push_back({s, i});
        last = std::max(last, s.release_end_ns);
      }
      for (const FailedWait& w : r->failed_waits) {
        failed.push_back(w);
        last = std::max(last, w.returned_ns);
      }
      d.failed_acquisitions += r->failed_acquisitions;
      d.failed_releases += r->failed_releases;
      if (!r->last_error.empty()) d.last_error = r->last_error;
      d.contenders_cpu += r->cpu;
      d.client_requests += r->requests;
      d.subscriber_requests += r->subscriber_requests;
      d.messages_heard += r->subscriber_messages;
    }
    d.sections += static_cast<int64_t>(sections.size());
    d.duration_s += (last - SteadyNanos(start)) / 1e9;
    d.windows.push_back({SteadyNanos(start), last});
    d.blocks.push_back(std::move(sections));
    d.failed.push_back(std::move(failed));
    return absl::OkStatus();
  }

  using Intervals = std::vector<std::pair<int64_t, int64_t>>;

  static Intervals Waits(const std::vector<TimedSection>& sections,
                         const std::vector<FailedWait>& failed) {
    Intervals w;
    for (const TimedSection& t : sections) {
      w.push_back({t.s.acquire_called_ns, t.s.acquired_ns});
    }
    for (const FailedWait& f : failed)
      w.push_back({f.called_ns, f.returned_ns});
    return w;
  }

  static Intervals Releases(const std::vector<TimedSection>& sections) {
    Intervals h;
    for (const TimedSection& t : sections) {
      h.push_back({t.s.release_start_ns, t.s.release_end_ns});
    }
    return h;
  }

  static Intervals Holds(const std::vector<TimedSection>& sections,
                         int shared /* -1 any, 0 writers, 1 readers */) {
    Intervals h;
    for (const TimedSection& t : sections) {
      if (shared >= 0 && t.s.shared != (shared == 1)) continue;
      h.push_back({t.s.acquired_ns, t.s.release_start_ns});
    }
    return h;
  }

  static void AnalyseSemaphore(const KindData& d, SemaphoreFigures& f) {
    {
      double contended_in_use = 0, contended_s = 0, in_use = 0, window = 0,
             waiting = 0, releasing = 0;
      for (size_t b = 0; b < d.blocks.size(); ++b) {
        std::map<int, std::vector<TimedSection>> by_slot;
        for (const TimedSection& t : d.blocks[b]) {
          if (t.s.slot < 0) {
            ++f.no_slot;
          } else {
            by_slot[t.s.slot].push_back(t);
          }
          f.wait_us.push_back((t.s.acquired_ns - t.s.acquire_called_ns) / 1e3);
        }
        for (auto& [slot, seq] : by_slot) AddHandoffs(seq, f.handoffs);
        const auto [w0, w1] = d.windows[b];
        const Intervals holds = Holds(d.blocks[b], -1);
        const Intervals waits = Waits(d.blocks[b], d.failed[b]);
        const Sweep all = Integrate(holds, nullptr, w0, w1);
        const Sweep contended = Integrate(holds, &waits, w0, w1);
        releasing +=
            Integrate(Releases(d.blocks[b]), &waits, w0, w1).weighted_s;
        const Sweep w = Integrate(waits, nullptr, w0, w1);
        contended_in_use += contended.weighted_s;
        contended_s += contended.counted_s;
        in_use += all.weighted_s;
        window += all.counted_s;
        waiting += w.weighted_s;
        f.max_in_use = std::max(f.max_in_use, all.max_value);
      }
      f.mean_in_use_contended = Ratio(contended_in_use, contended_s);
      f.mean_releasing_contended = Ratio(releasing, contended_s);
      f.contended_share = Ratio(contended_s, window);
      f.mean_in_use = Ratio(in_use, window);
      f.mean_waiting = Ratio(waiting, window);
    }
  }

  void Analyse() {
    {  // Lock.
      const KindData& d = data_[kLock];
      double waiting = 0, window = 0, held = 0, releasing = 0, contended = 0;
      for (size_t b = 0; b < d.blocks.size(); ++b) {
        AddHandoffs(d.blocks[b], lock_.handoffs);
        {
          const auto [w0, w1] = d.windows[b];
          const Intervals waits = Waits(d.blocks[b], d.failed[b]);
          const Sweep h = Integrate(Holds(d.blocks[b], -1), &waits, w0, w1);
          const Sweep r = Integrate(Releases(d.blocks[b]), &waits, w0, w1);
          held += h.weighted_s;
          releasing += r.weighted_s;
          contended += h.counted_s;
        }
        for (const TimedSection& t : d.blocks[b]) {
          lock_.wait_us.push_back((t.s.acquired_ns - t.s.acquire_called_ns) /
                                  1e3);
        }
        const auto [w0, w1] = d.windows[b];
        const Sweep s =
            Integrate(Waits(d.blocks[b], d.failed[b]), nullptr, w0, w1);
        waiting += s.weighted_s;
        window += s.counted_s;
      }
      lock_.mean_waiting = Ratio(waiting, window);
      lock_.held_contended = Ratio(held, contended);
      lock_.releasing_contended = Ratio(releasing, contended);
    }
    AnalyseSemaphore(data_[kSemaphore], sem_);
    AnalyseSemaphore(data_[kSemaphoreLong], sem_long_);
    {  // Read-write lock.
      const KindData& d = data_[kRwLock];
      double readers = 0, window = 0, inside_readers = 0, inside_s = 0;
      for (size_t b = 0; b < d.blocks.size(); ++b) {
        const std::vector<TimedSection>& all = d.blocks[b];
        const auto [w0, w1] = d.windows[b];
        const Intervals rh = Holds(all, 1);
        const Sweep r = Integrate(rh, nullptr, w0, w1);
        const Sweep ri = Integrate(rh, &rh, w0, w1);
        readers += r.weighted_s;
        window += r.counted_s;
        inside_readers += ri.weighted_s;
        inside_s += ri.counted_s;
        rw_.max_readers = std::max(rw_.max_readers, r.max_value);
        std::vector<const TimedSection*> writers, reader_list;
        for (const TimedSection& t : all) {
          const double wait = (t.s.acquired_ns - t.s.acquire_called_ns) / 1e3;
          all_rw_wait_us_.push_back(wait);
          if (t.s.shared) {
            ++rw_.readers;
            rw_.reader_wait_us.push_back(wait);
            reader_list.push_back(&t);
          } else {
            ++rw_.writers;
            rw_.writer_wait_us.push_back(wait);
            writers.push_back(&t);
          }
        }
        for (const TimedSection* w : writers) {
          const HandoffSection& ws = w->s;
          // Overlaps with this writer's hold.
          for (const TimedSection* r2 : reader_list) {
            if (r2->s.acquired_ns < ws.release_start_ns &&
                ws.acquired_ns < r2->s.release_start_ns) {
              ++rw_.reader_with_writer;
            }
            if (ws.marked_ns > 0 && r2->s.won_sent_ns > ws.marked_ns &&
                r2->s.won_sent_ns < ws.acquired_ns) {
              ++rw_.readers_past_mark;
              rw_.past_mark_margin_us.push_back(
                  (r2->s.won_sent_ns - ws.marked_ns) / 1e3);
              for (const TimedSection* w3 : writers) {
                if (w3 != w && w3->s.acquired_ns > ws.marked_ns &&
                    w3->s.acquired_ns < r2->s.won_sent_ns) {
                  ++rw_.readers_past_mark_after_other_writer;
                  break;
                }
              }
            }
          }
          int64_t k = 0;
          for (const TimedSection* w2 : writers) {
            if (w2 == w) continue;
            if (w2->s.acquired_ns < ws.release_start_ns &&
                ws.acquired_ns < w2->s.release_start_ns) {
              ++rw_.writer_with_writer;  // Each pair counted twice.
            }
            if (w2->s.acquired_ns > ws.acquire_called_ns &&
                w2->s.acquired_ns < ws.acquired_ns) {
              ++k;
            }
          }
          if (ws.marked_ns > 0) ++rw_.marked_writers;
          const double wait = (ws.acquired_ns - ws.acquire_called_ns) / 1e3;
          if (k == 0) rw_.lone_writer_wait_us.push_back(wait);
          if (wait > BoundUs(k)) {
            ++rw_.writers_over_bound;
            rw_.worst_over_bound_ms =
                std::max(rw_.worst_over_bound_ms, (wait - BoundUs(k)) / 1000);
          }
        }
      }
      rw_.writer_with_writer /= 2;
      rw_.mean_readers = Ratio(readers, window);
      rw_.mean_readers_inside = Ratio(inside_readers, inside_s);
    }
  }

  const int rounds_;
  const absl::Duration block_;
  const absl::Duration hold_;
  const absl::Duration think_;
  const absl::Duration long_hold_;
  const absl::Duration ttl_;
  const absl::Duration wait_;
  const int contenders_[kKinds];
  const int limit_;
  const double read_share_;
  const absl::Duration max_delay_;
  std::string binary_;
  bool ran_ = false;
  std::string skipped_;
  KindData data_[kKinds];
  LockFigures lock_;
  SemaphoreFigures sem_;
  SemaphoreFigures sem_long_;
  RwFigures rw_;
  std::vector<double> all_rw_wait_us_;
};

const RegisterPhase kRegistered(47, "contended_kinds",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<ContendedKindsPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
