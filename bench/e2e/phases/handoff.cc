// Copyright 2026 The redlock Authors.
//
// Hand-off phase: how soon a waiter in another process takes the lock once
// its holder released it, and what the waiting costs, with waiters only
// polling (RetryPolicy::wake_on_release = false) and woken on release (the
// default). Contender processes (redlock-e2e-handoff-contender, 8 by
// default), each with a blocking Redlock of its own, loop on one resource
// at N=5: Acquire → hold → Release (awaited) → think. Both modes run in
// interleaved blocks (which goes first alternates by round), each block with
// fresh processes of its mode only, connected before its clock starts.
//
// Per block: every critical section with the attempts its acquisition made
// (from the contenders' reports), the masters' INFO counters before and
// after (commands, calls per command, CPU), the contenders' own counts of
// what their clients sent and heard, and their CPU over their loops.
//
// Reports results.json's "handoff".

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
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

ABSL_FLAG(int, handoff_contenders, 8,
          "Hand-off phase: contender processes on one resource.");
// Hold 10ms, think 5ms: the lock is busy twice as long as a contender is
// away, so when it is released, waiters are there (about 6.6 of 8 inside
// Acquire() in trial runs) and the releaser is not back yet: the hand-off is
// a waiter's, as with jobs queued on one lock. With hold 1ms the releaser
// itself came back within a poll and took most hand-offs with its first
// attempt, on a free lock, in both modes; with think 50ms the lock sat idle.
ABSL_FLAG(absl::Duration, handoff_hold, absl::Milliseconds(10),
          "Hand-off phase: how long each critical section holds the lock.");
ABSL_FLAG(absl::Duration, handoff_think, absl::Milliseconds(5),
          "Hand-off phase: pause after each Release() returned, before the "
          "next Acquire().");
ABSL_FLAG(std::optional<absl::Duration>, handoff_wake_jitter, std::nullopt,
          "Hand-off phase: RetryPolicy::wake_jitter of the woken contenders "
          "(default: the library's).");
ABSL_FLAG(int, handoff_rounds, 6,
          "Hand-off phase: rounds of one poll block and one wake block "
          "(which goes first alternates).");
ABSL_FLAG(absl::Duration, handoff_block, absl::Milliseconds(2500),
          "Hand-off phase: how long new acquisitions start in each block.");
ABSL_FLAG(absl::Duration, handoff_ttl, absl::Seconds(1),
          "Hand-off phase: lock TTL.");
ABSL_FLAG(absl::Duration, handoff_wait, absl::Seconds(2),
          "Hand-off phase: each Acquire()'s wait budget.");
ABSL_FLAG(std::string, handoff_contender_binary, "",
          "Hand-off phase: the contender binary. Default: "
          "redlock-e2e-handoff-contender next to this binary.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
constexpr absl::string_view kResource = "handoff";

enum Mode { kPoll = 0, kWake = 1 };
constexpr const char* kModeNames[] = {"poll", "wake"};

struct TimedSection {
  HandoffSection times;
  int contender = 0;
};

// What one block of one mode measured, or every block of a mode summed.
struct Figures {
  int64_t sections = 0;
  double duration_s = 0;
  std::vector<double> gap_us;  // Next acquired - previous release returned.
  // The same, of the hand-offs to a waiter: a next holder whose acquisition
  // made 2 or more attempts, so its first attempt lost and it was waiting
  // when the lock was released. The others went to a first attempt, of a
  // contender back from thinking or one whose attempt was in flight.
  std::vector<double> waiter_gap_us;
  int64_t attempts_unknown = 0;  // Sections whose client reported none.
  double waiting_s = 0;          // Summed over contenders: inside Acquire().
  std::vector<double> wait_us;   // Acquire() called to returned OK.
  int64_t same_again = 0;        // Hand-offs to the process that released.
  int64_t overlaps = 0;          // Acquired before the previous release began.
  int64_t failed_acquisitions = 0;
  int64_t failed_releases = 0;
  std::string last_error;
  MasterCounters masters;  // Deltas over the block, our own INFO taken off.
  Cpu contenders_cpu;      // Over the contenders' loops.
  // The contenders' clients' own counts: requests on the lock connections,
  // on the subscriber connections, and messages those heard.
  int64_t client_requests = 0;
  int64_t subscriber_requests = 0;
  int64_t messages_heard = 0;

  void Add(const Figures& b) {
    sections += b.sections;
    duration_s += b.duration_s;
    gap_us.insert(gap_us.end(), b.gap_us.begin(), b.gap_us.end());
    waiter_gap_us.insert(waiter_gap_us.end(), b.waiter_gap_us.begin(),
                         b.waiter_gap_us.end());
    attempts_unknown += b.attempts_unknown;
    waiting_s += b.waiting_s;
    wait_us.insert(wait_us.end(), b.wait_us.begin(), b.wait_us.end());
    same_again += b.same_again;
    overlaps += b.overlaps;
    failed_acquisitions += b.failed_acquisitions;
    failed_releases += b.failed_releases;
    if (!b.last_error.empty()) last_error = b.last_error;
    masters += b.masters;
    contenders_cpu += b.contenders_cpu;
    client_requests += b.client_requests;
    subscriber_requests += b.subscriber_requests;
    messages_heard += b.messages_heard;
  }
  double PerSection(double x) const { return sections > 0 ? x / sections : 0; }
  double SectionsPerS() const { return Ratio(sections, duration_s); }
  double CommandsPerSection() const { return PerSection(masters.commands); }
  // Everything the clients sent, subscriber connections included.
  double RequestsPerSection() const {
    return PerSection(client_requests + subscriber_requests);
  }
  double SubscriberRequestsPerSection() const {
    return PerSection(subscriber_requests);
  }
  double MessagesPerSection() const { return PerSection(messages_heard); }
  double ContenderCpuUs() const {
    return PerSection(contenders_cpu.total() * 1e6);
  }
  double MasterCpuUs() const { return PerSection(masters.cpu.total() * 1e6); }
  // How many contenders were inside Acquire(), on average.
  double MeanWaiting() const { return Ratio(waiting_s, duration_s); }
  double WaiterShare() const {
    return Ratio(static_cast<double>(waiter_gap_us.size()),
                 static_cast<double>(gap_us.size()));
  }
  double SameAgainShare() const {
    return Ratio(same_again, static_cast<double>(gap_us.size()));
  }
};

struct Block {
  Mode mode = kPoll;
  int round = 0;
  Figures figures;
};

// The hand-offs of one block: sections of every contender by acquisition.
void AddHandoffs(std::vector<TimedSection> all, Figures& f) {
  std::sort(all.begin(), all.end(),
            [](const TimedSection& a, const TimedSection& b) {
              return a.times.acquired_ns < b.times.acquired_ns;
            });
  f.sections = static_cast<int64_t>(all.size());
  for (const TimedSection& s : all) {
    f.wait_us.push_back((s.times.acquired_ns - s.times.acquire_called_ns) /
                        1e3);
    if (s.times.attempts < 1) ++f.attempts_unknown;
  }
  for (size_t i = 1; i < all.size(); ++i) {
    const HandoffSection& prev = all[i - 1].times;
    const HandoffSection& next = all[i].times;
    // The next holder can only have won after the previous one started to
    // release: anything else means two holders at once.
    if (next.acquired_ns < prev.release_start_ns) ++f.overlaps;
    // Signed: the next holder may win before the previous Release() has
    // returned (the masters deleted the key before their replies arrived).
    const double gap_us = (next.acquired_ns - prev.release_end_ns) / 1e3;
    f.gap_us.push_back(gap_us);
    if (next.attempts >= 2) f.waiter_gap_us.push_back(gap_us);
    if (all[i].contender == all[i - 1].contender) ++f.same_again;
  }
}

std::string Ms(double us) { return Us(us / 1000); }

class HandoffPhase : public Phase {
 public:
  explicit HandoffPhase(bool quick)
      : contenders_(absl::GetFlag(FLAGS_handoff_contenders)),
        hold_(absl::GetFlag(FLAGS_handoff_hold)),
        think_(absl::GetFlag(FLAGS_handoff_think)),
        rounds_(quick ? 2 : absl::GetFlag(FLAGS_handoff_rounds)),
        block_(quick ? absl::Milliseconds(500)
                     : absl::GetFlag(FLAGS_handoff_block)),
        ttl_(absl::GetFlag(FLAGS_handoff_ttl)),
        wait_(absl::GetFlag(FLAGS_handoff_wait)) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      skipped_ = RunHandoff(ctx);
    }
    if (!skipped_.empty()) Log(absl::StrCat("handoff: skipped: ", skipped_));
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["handoff_contenders"] = contenders_;
    settings["handoff_hold_ms"] = Num(absl::ToDoubleMilliseconds(hold_));
    settings["handoff_think_ms"] = Num(absl::ToDoubleMilliseconds(think_));
    settings["handoff_rounds"] = rounds_;
    settings["handoff_block_s"] = Num(absl::ToDoubleSeconds(block_));
    settings["handoff_ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
    settings["handoff_wait_ms"] = Num(absl::ToDoubleMilliseconds(wait_));
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target gap =
        Unmeasured("hand-off to a waiter, woken on release: median gap ≤ 2 ms");
    Target requests = Unmeasured(
        "hand-off: requests per section woken ≤ polling (clients' count, "
        "subscriber connections included)");
    Target overlaps =
        Unmeasured("hand-off: no overlapping holders (both modes)");
    if (ran_) {
      const Figures& p = modes_[kPoll];
      const Figures& w = modes_[kWake];
      const double wake_waiter_p50 = Median(w.waiter_gap_us);
      const double poll_waiter_p50 = Median(p.waiter_gap_us);
      gap = {gap.what,
             absl::StrFormat(
                 "to a waiter p50 %s ms (polling %s ms: %s), %.0f%% of "
                 "hand-offs (polling %.0f%%); all hand-offs p50 %s ms "
                 "(polling %s ms)",
                 Ms(wake_waiter_p50), Ms(poll_waiter_p50),
                 X(Ratio(wake_waiter_p50, poll_waiter_p50)),
                 100 * w.WaiterShare(), 100 * p.WaiterShare(),
                 Ms(Median(w.gap_us)), Ms(Median(p.gap_us))),
             !w.waiter_gap_us.empty() && wake_waiter_p50 <= 2000, true};
      requests = {
          requests.what,
          absl::StrFormat(
              "%.2f vs %.2f (%s); masters' commands %.2f vs %.2f",
              w.RequestsPerSection(), p.RequestsPerSection(),
              X(Ratio(w.RequestsPerSection(), p.RequestsPerSection())),
              w.CommandsPerSection(), p.CommandsPerSection()),
          w.sections > 0 && w.RequestsPerSection() <= p.RequestsPerSection(),
          true};
      overlaps = {
          overlaps.what,
          absl::StrFormat("polling %d, woken %d (in %d and %d "
                          "sections)",
                          p.overlaps, w.overlaps, p.sections, w.sections),
          p.overlaps == 0 && w.overlaps == 0, true};
    }
    targets.push_back(gap);
    targets.push_back(requests);
    targets.push_back(overlaps);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "Hand-off skipped: ", skipped_, "\n\n");
      }
      return;
    }
    const Figures& p = modes_[kPoll];
    const Figures& w = modes_[kWake];
    absl::StrAppend(
        &md, "### Hand-off between processes (", contenders_,
        " contender processes, one resource, N=", kMasters, ")\n\n",
        "Each contender is a process with a blocking `Redlock` of its own "
        "that loops Acquire(ttl ",
        absl::FormatDuration(ttl_), ", wait ", absl::FormatDuration(wait_),
        ") → hold ", absl::FormatDuration(hold_),
        " → Release() (awaited) → think ", absl::FormatDuration(think_),
        ". **poll**: `RetryPolicy::wake_on_release = false`, waiters retry "
        "after the retry delay (20–60 ms); **wake**: default options, waiters "
        "are woken when the lock is released. ",
        rounds_, " rounds of one ", absl::FormatDuration(block_),
        " block of each (which goes first alternates), each block with fresh "
        "processes of its mode only, all connected before its clock starts. "
        "\"Hand-off\": from one holder's Release() returning to the next "
        "holder's Acquire() returning, over consecutive sections by "
        "acquisition time (negative when the next holder won before the "
        "previous Release() returned). \"To a waiter\": the hand-offs whose "
        "next holder's acquisition made 2 or more attempts "
        "(`AcquiredEvent::attempts`, from an `Observer` in each contender): "
        "its first attempt lost, so it was waiting when the lock was "
        "released. The rest went to a first attempt: a contender back from "
        "thinking while the lock was free, or one whose attempt was in flight "
        "as the lock was released. \"Waiting\": contenders inside Acquire(), "
        "on average.\n\n",
        "| mode | sections | sections/s | waiting | hand-off p50 ms | p90 ms | "
        "p99 ms | max ms | to a waiter | to a waiter p50 ms | p90 ms | p99 ms "
        "| max ms | same process again | overlapping holders | failed "
        "acquisitions |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        "\n");
    for (Mode m : {kPoll, kWake}) {
      const Figures& f = modes_[m];
      const Dist g = Summarize(f.gap_us);
      const Dist wg = Summarize(f.waiter_gap_us);
      absl::StrAppend(
          &md, "| ", kModeNames[m], " | ", f.sections, " | ",
          absl::StrFormat("%.0f | %.1f", f.SectionsPerS(), f.MeanWaiting()),
          " | ", Ms(g.p50), " | ", Ms(g.p90), " | ", Ms(g.p99), " | ",
          Ms(g.max), " | ", absl::StrFormat("%.0f%%", 100 * f.WaiterShare()),
          " | ", Ms(wg.p50), " | ", Ms(wg.p90), " | ", Ms(wg.p99), " | ",
          Ms(wg.max), " | ",
          absl::StrFormat("%.0f%%", 100 * f.SameAgainShare()), " | ",
          f.overlaps, " | ", f.failed_acquisitions, " |\n");
    }
    {
      const Dist pg = Summarize(p.gap_us);
      const Dist wg = Summarize(w.gap_us);
      const Dist pw = Summarize(p.waiter_gap_us);
      const Dist ww = Summarize(w.waiter_gap_us);
      absl::StrAppend(
          &md, "| wake/poll | ", X(Ratio(w.sections, p.sections)), " | ",
          X(Ratio(w.SectionsPerS(), p.SectionsPerS())), " | ",
          X(Ratio(w.MeanWaiting(), p.MeanWaiting())), " | ",
          X(Ratio(wg.p50, pg.p50)), " | ", X(Ratio(wg.p90, pg.p90)), " | ",
          X(Ratio(wg.p99, pg.p99)), " | ", X(Ratio(wg.max, pg.max)), " | ",
          X(Ratio(w.WaiterShare(), p.WaiterShare())), " | ",
          X(Ratio(ww.p50, pw.p50)), " | ", X(Ratio(ww.p90, pw.p90)), " | ",
          X(Ratio(ww.p99, pw.p99)), " | ", X(Ratio(ww.max, pw.max)), " | ",
          X(Ratio(w.SameAgainShare(), p.SameAgainShare())), " | | |\n\n");
    }
    const Dist pw = Summarize(p.wait_us);
    const Dist ww = Summarize(w.wait_us);
    absl::StrAppend(
        &md, "Median hand-off wake/poll per round (min / median / max): all ",
        RoundSpread(&Figures::gap_us), ", to a waiter ",
        RoundSpread(&Figures::waiter_gap_us),
        ". Acquire() wait (called to returned OK), p50 / p99 / max ms: poll ",
        Ms(pw.p50), " / ", Ms(pw.p99), " / ", Ms(pw.max), ", wake ", Ms(ww.p50),
        " / ", Ms(ww.p99), " / ", Ms(ww.max), ".");
    if (p.attempts_unknown + w.attempts_unknown > 0) {
      absl::StrAppend(&md, " **", p.attempts_unknown + w.attempts_unknown,
                      " sections without an attempt count** (counted as first "
                      "attempts).");
    }
    absl::StrAppend(
        &md, "\n\n",
        "What a critical section costs, each divided by the sections: "
        "requests the clients sent (their own count, `MasterHealth::requests` "
        "plus `subscriber_requests`: the subscriber connections' SUBSCRIBE, "
        "UNSUBSCRIBE and AUTH included), messages their subscriber "
        "connections heard (`subscriber_messages`), commands the masters "
        "executed (`total_commands_processed` deltas over each block, the "
        "harness's own INFO taken off), the contenders' CPU (getrusage over "
        "their loops) and the masters' (`INFO cpu`). The target compares the "
        "clients' requests: the masters' count includes every command run "
        "inside a Lua script (a release's EVALSHA counts with the GET, DEL "
        "and PUBLISH it runs, a woken waiter's attempt's with its EXISTS, SET "
        "and PUBLISH, where a polling attempt is one SET), so it charges a "
        "script for work done in one request.\n\n",
        "| mode | requests per section | of which subscriber | messages "
        "heard per section | masters' commands per section | contenders' "
        "CPU µs per section | masters' CPU µs per section | commands by "
        "name |\n|---|--:|--:|--:|--:|--:|--:|---|\n");
    for (Mode m : {kPoll, kWake}) {
      const Figures& f = modes_[m];
      absl::StrAppend(
          &md, "| ", kModeNames[m], " | ",
          absl::StrFormat("%.2f | %.2f | %.2f | %.2f", f.RequestsPerSection(),
                          f.SubscriberRequestsPerSection(),
                          f.MessagesPerSection(), f.CommandsPerSection()),
          " | ", Us(f.ContenderCpuUs()), " | ", Us(f.MasterCpuUs()), " | ",
          CallsPerSection(f), " |\n");
    }
    // Polling clients open no subscriber connection: no ratio to give.
    absl::StrAppend(
        &md, "| wake/poll | ",
        X(Ratio(w.RequestsPerSection(), p.RequestsPerSection())), " | ",
        "— | — | ", X(Ratio(w.CommandsPerSection(), p.CommandsPerSection())),
        " | ", X(Ratio(w.ContenderCpuUs(), p.ContenderCpuUs())), " | ",
        X(Ratio(w.MasterCpuUs(), p.MasterCpuUs())), " | |\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      j["contenders"] = contenders_;
      j["masters"] = kMasters;
      j["ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
      j["wait_budget_ms"] = Num(absl::ToDoubleMilliseconds(wait_));
      j["hold_ms"] = Num(absl::ToDoubleMilliseconds(hold_));
      j["think_ms"] = Num(absl::ToDoubleMilliseconds(think_));
      for (Mode m : {kPoll, kWake}) j[kModeNames[m]] = FiguresJson(modes_[m]);
      const Figures& p = modes_[kPoll];
      const Figures& w = modes_[kWake];
      const Dist pg = Summarize(p.gap_us);
      const Dist wg = Summarize(w.gap_us);
      Json r = Json::object();
      r["sections_per_s"] = Num(Ratio(w.SectionsPerS(), p.SectionsPerS()));
      r["handoff_p50"] = Num(Ratio(wg.p50, pg.p50));
      r["handoff_p90"] = Num(Ratio(wg.p90, pg.p90));
      r["handoff_p99"] = Num(Ratio(wg.p99, pg.p99));
      r["handoff_max"] = Num(Ratio(wg.max, pg.max));
      r["handoff_to_waiter_p50"] =
          Num(Ratio(Median(w.waiter_gap_us), Median(p.waiter_gap_us)));
      r["to_waiter_share"] = Num(Ratio(w.WaiterShare(), p.WaiterShare()));
      r["acquire_wait_p99"] =
          Num(Ratio(Summarize(w.wait_us).p99, Summarize(p.wait_us).p99));
      r["same_process_again_share"] =
          Num(Ratio(w.SameAgainShare(), p.SameAgainShare()));
      r["commands_per_section"] =
          Num(Ratio(w.CommandsPerSection(), p.CommandsPerSection()));
      r["requests_per_section"] =
          Num(Ratio(w.RequestsPerSection(), p.RequestsPerSection()));
      r["messages_heard_per_section"] =
          Num(Ratio(w.MessagesPerSection(), p.MessagesPerSection()));
      r["contenders_cpu_per_section"] =
          Num(Ratio(w.ContenderCpuUs(), p.ContenderCpuUs()));
      r["masters_cpu_per_section"] =
          Num(Ratio(w.MasterCpuUs(), p.MasterCpuUs()));
      r["round_handoff_p50"] = Nums(RoundRatios(&Figures::gap_us));
      r["round_handoff_to_waiter_p50"] =
          Nums(RoundRatios(&Figures::waiter_gap_us));
      j["ratio_wake_poll"] = std::move(r);
      Json blocks = Json::array();
      for (const Block& b : blocks_) {
        Json k = Json::object();
        k["round"] = b.round;
        k["mode"] = kModeNames[b.mode];
        k["sections"] = b.figures.sections;
        k["duration_s"] = Num(b.figures.duration_s);
        k["mean_waiting"] = Num(b.figures.MeanWaiting());
        k["handoff_p50_us"] = Num(Summarize(b.figures.gap_us).p50);
        k["handoff_to_waiter_p50_us"] =
            Num(Summarize(b.figures.waiter_gap_us).p50);
        k["to_waiter_share"] = Num(b.figures.WaiterShare());
        k["requests_per_section"] = Num(b.figures.RequestsPerSection());
        k["commands_per_section"] = Num(b.figures.CommandsPerSection());
        k["contenders_cpu_us_per_section"] = Num(b.figures.ContenderCpuUs());
        k["masters_cpu_us_per_section"] = Num(b.figures.MasterCpuUs());
        blocks.push_back(std::move(k));
      }
      j["blocks"] = std::move(blocks);
    }
    results["handoff"] = std::move(j);
  }

 private:
  // Returns why the phase did not run, or "" once it ran.
  std::string RunHandoff(Context& ctx) {
    binary_ = absl::GetFlag(FLAGS_handoff_contender_binary);
    if (binary_.empty()) {
      binary_ = absl::StrCat(SelfDirectory(), "/redlock-e2e-handoff-contender");
    }
    if (access(binary_.c_str(), X_OK) != 0) {
      return absl::StrCat("no contender binary at ", binary_,
                          " (built with redlock-e2e-bench)");
    }
    std::vector<ContextPtr> info;
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<ContextPtr> c = ConnectSync(ctx.masters[i].address);
      if (!c.ok())
        return absl::StrCat("INFO connection: ", c.status().ToString());
      info.push_back(*std::move(c));
    }
    Log(absl::StrCat("handoff: ", rounds_, " rounds x (poll, wake) blocks of ",
                     absl::FormatDuration(block_), ", ", contenders_,
                     " contender processes"));
    for (int round = 0; round < rounds_; ++round) {
      for (int k = 0; k < 2; ++k) {
        const Mode mode = static_cast<Mode>((k + round) % 2);
        absl::StatusOr<Figures> f = RunBlock(ctx, info, mode);
        if (!f.ok()) {
          return absl::StrCat("round ", round + 1, ", ", kModeNames[mode], ": ",
                              f.status().ToString());
        }
        modes_[mode].Add(*f);
        blocks_.push_back({mode, round, *std::move(f)});
      }
    }
    ran_ = true;
    return "";
  }

  absl::StatusOr<Figures> RunBlock(const Context& ctx,
                                   std::vector<ContextPtr>& info, Mode mode) {
    const Options options = ClientOptions(UrisOf(ctx.masters, kMasters), false);
    std::vector<std::vector<std::string>> args;
    for (int i = 0; i < contenders_; ++i) {
      args.push_back({
          absl::StrCat("--id=", i),
          absl::StrCat("--key_prefix=", options.key_prefix),
          absl::StrCat("--resource=", kResource),
          absl::StrCat("--ttl=", absl::FormatDuration(ttl_)),
          absl::StrCat("--wait=", absl::FormatDuration(wait_)),
          absl::StrCat("--hold=", absl::FormatDuration(hold_)),
          absl::StrCat("--think=", absl::FormatDuration(think_)),
          absl::StrCat("--wake_on_release=", mode == kWake ? "true" : "false"),
      });
      if (std::optional<absl::Duration> jitter =
              absl::GetFlag(FLAGS_handoff_wake_jitter)) {
        args.back().push_back(
            absl::StrCat("--wake_jitter=", absl::FormatDuration(*jitter)));
      }
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
    Figures f;
    f.masters = run->masters;
    std::vector<TimedSection> all;
    SteadyTime last = end;
    for (int i = 0; i < contenders_; ++i) {
      absl::StatusOr<ContenderReport> r = ParseReport(reports[i]);
      if (!r.ok()) return r.status();
      for (const HandoffSection& s : r->sections) {
        all.push_back({s, i});
        last = std::max(last, FromSteadyNanos(s.release_end_ns));
      }
      f.failed_acquisitions += r->failed_acquisitions;
      f.failed_releases += r->failed_releases;
      if (!r->last_error.empty()) f.last_error = r->last_error;
      f.contenders_cpu += r->cpu;
      f.client_requests += r->requests;
      f.subscriber_requests += r->subscriber_requests;
      f.messages_heard += r->subscriber_messages;
      f.waiting_s += r->waiting_ns / 1e9;
    }
    f.duration_s = SecondsBetween(start, last);
    AddHandoffs(std::move(all), f);
    return f;
  }

  static Json FiguresJson(const Figures& f) {
    Json k = Json::object();
    k["sections"] = f.sections;
    k["duration_s"] = Num(f.duration_s);
    k["sections_per_s"] = Num(f.SectionsPerS());
    k["mean_waiting"] = Num(f.MeanWaiting());
    k["acquire_wait"] = DistJson(Summarize(f.wait_us));
    k["handoff"] = DistJson(Summarize(f.gap_us));
    k["handoff_to_waiter"] = DistJson(Summarize(f.waiter_gap_us));
    k["to_waiter_share"] = Num(f.WaiterShare());
    k["attempts_unknown"] = f.attempts_unknown;
    k["same_process_again"] = f.same_again;
    k["overlapping_holders"] = f.overlaps;
    k["failed_acquisitions"] = f.failed_acquisitions;
    k["failed_releases"] = f.failed_releases;
    k["last_error"] = f.last_error;
    k["commands_per_section"] = Num(f.CommandsPerSection());
    Json calls = Json::object();
    for (const auto& [name, n] : f.masters.calls) {
      calls[name] = Num(f.PerSection(n));
    }
    k["calls_per_section"] = std::move(calls);
    k["requests_per_section"] = Num(f.RequestsPerSection());
    k["subscriber_requests_per_section"] =
        Num(f.SubscriberRequestsPerSection());
    k["messages_heard_per_section"] = Num(f.MessagesPerSection());
    k["contenders_cpu_us_per_section"] = Num(f.ContenderCpuUs());
    k["masters_cpu_us_per_section"] = Num(f.MasterCpuUs());
    return k;
  }

  // "evalsha 5.00, set 5.00, ...", most first.
  static std::string CallsPerSection(const Figures& f) {
    std::vector<std::pair<int64_t, std::string>> by_count;
    for (const auto& [name, n] : f.masters.calls) by_count.push_back({n, name});
    std::sort(by_count.rbegin(), by_count.rend());
    std::vector<std::string> parts;
    for (const auto& [n, name] : by_count) {
      parts.push_back(absl::StrFormat("%s %.2f", name, f.PerSection(n)));
    }
    return parts.empty() ? "—" : absl::StrJoin(parts, ", ");
  }

  // Median hand-off (all, or to a waiter: `gaps`) of the wake block over
  // that of the poll block, by round.
  using Gaps = std::vector<double> Figures::*;
  std::vector<double> RoundRatios(Gaps gaps) const {
    std::vector<double> rr;
    for (int round = 0; round < rounds_; ++round) {
      double p50[2] = {0, 0};
      for (const Block& b : blocks_) {
        if (b.round == round) p50[b.mode] = Median(b.figures.*gaps);
      }
      if (p50[kPoll] > 0 && p50[kWake] > 0)
        rr.push_back(p50[kWake] / p50[kPoll]);
    }
    return rr;
  }

  std::string RoundSpread(Gaps gaps) const {
    std::vector<double> rr = RoundRatios(gaps);
    if (rr.empty()) return "—";
    std::sort(rr.begin(), rr.end());
    return absl::StrCat(X(rr.front()), " / ", X(Median(rr)), " / ",
                        X(rr.back()));
  }

  const int contenders_;
  const absl::Duration hold_;
  const absl::Duration think_;
  const int rounds_;
  const absl::Duration block_;
  const absl::Duration ttl_;
  const absl::Duration wait_;
  std::string binary_;
  bool ran_ = false;
  std::string skipped_;
  Figures modes_[2];
  std::vector<Block> blocks_;
};

const RegisterPhase kRegistered(45, "handoff",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<HandoffPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
