// Copyright 2026 The redlock Authors.
//
// Contention beside a peer: 8 contender processes (by default) loop
// acquire → release with no hold and no pause on one resource on the same
// 5 masters, once as our blocking Redlock (redlock-e2e-handoff-contender
// with --hold=0 --think=0, default RetryPolicy) and once as node-redlock 5
// with ioredis (bench/peers/node-redlock/contender.js, speaking the same
// line protocol, handoff_protocol.h). Both kinds run in interleaved blocks
// (which goes first alternates by round), each block with fresh processes
// of its kind only, all connected before its clock starts.
//
// node-redlock runs with retryDelay and retryJitter chosen so that its
// retries come after the same 20–60 ms as ours (RetryPolicy's defaults:
// retryDelay 40 ± retryJitter 20), driftFactor 0.01 (its default; ours is
// too), and retryCount = wait / retryDelay, so that a refused acquisition
// gives up after about the same wait budget as ours.
//
// The node peer needs node and its npm packages: --node_redlock_dir names a
// directory holding contender.js with node_modules/ (scripts/bench.sh makes
// one with npm install when node and npm exist). Without it the node blocks
// are "not run" and ours still run, so the phase never fails for want of
// node.
//
// With --peer_baseline_contender_binary, a third kind, "ours (baseline)":
// another build's contender (say, of the commit before a change) in the same
// rounds, so that a change is measured before and after in one run.
//
// Reports results.json's "contention_peer".

#include <unistd.h>

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
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/contender_block.h"
#include "bench/e2e/handoff_protocol.h"
#include "bench/e2e/json.h"
#include "bench/e2e/master_counters.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/node_redlock_peer.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/stats.h"
#include "bench/e2e/sync_client.h"

ABSL_FLAG(int, peer_contenders, 8,
          "Contention-peer phase: contender processes of each kind.");
ABSL_FLAG(int, peer_rounds, 3,
          "Contention-peer phase: rounds of one block of ours and one of "
          "node-redlock's (which goes first alternates).");
ABSL_FLAG(absl::Duration, peer_block, absl::Seconds(4),
          "Contention-peer phase: how long new acquisitions start in each "
          "block.");
ABSL_FLAG(absl::Duration, peer_ttl, absl::Seconds(1),
          "Contention-peer phase: lock TTL, both kinds.");
ABSL_FLAG(absl::Duration, peer_wait, absl::Seconds(2),
          "Contention-peer phase: each acquisition's wait budget (ours: "
          "AcquireOptions::wait; node-redlock: retryCount = wait / "
          "retryDelay).");
ABSL_FLAG(std::optional<absl::Duration>, peer_wake_jitter, std::nullopt,
          "Contention-peer phase: RetryPolicy::wake_jitter of our contenders "
          "(default: the library's).");
ABSL_FLAG(std::string, peer_baseline_contender_binary, "",
          "Contention-peer phase: another build's "
          "redlock-e2e-handoff-contender (say, of the commit before a "
          "change), run as a third kind, \"ours (baseline)\", in the same "
          "rounds. Empty: not run.");
ABSL_FLAG(std::string, peer_contender_binary, "",
          "Contention-peer phase: our contender binary. Default: "
          "redlock-e2e-handoff-contender next to this binary.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
// node-redlock's retry settings, matched to RetryPolicy's defaults
// (min_delay 20 ms, max_delay 60 ms, uniform).
constexpr int kNodeRetryDelayMs = 40;
constexpr int kNodeRetryJitterMs = 20;
constexpr double kNodeDriftFactor = 0.01;

enum Kind { kOurs = 0, kNode = 1, kBaseline = 2 };
constexpr int kKinds = 3;
constexpr const char* kKindNames[] = {"ours", "node-redlock",
                                      "ours (baseline)"};

// What the blocks of one kind measured, or one block's.
struct Figures {
  int blocks = 0;
  int64_t grants = 0;
  double duration_s = 0;
  std::vector<double> wait_us;         // Acquisitions that won.
  std::vector<double> failed_wait_us;  // Acquisitions that gave up.
  std::vector<double> gap_us;  // Next acquired - previous release returned.
  Unfairness unfairness;       // Most / least grants of one contender.
  int64_t attempts = 0;        // Summed over grants (their own count).
  int64_t overlaps = 0;        // Acquired before the previous release began.
  int64_t failed_acquisitions = 0;
  int64_t failed_releases = 0;
  std::string last_error;
  Cpu cpu;                 // The contenders', over their loops.
  int64_t requests = 0;    // Their clients' own count, subscribers included.
  int64_t messages = 0;    // Heard on their subscriber connections (ours).
  int64_t same_again = 0;  // Grants to the contender that held it before.
  MasterCounters masters;  // Deltas, our own INFO taken off.

  void Add(const Figures& b) {
    blocks += b.blocks;
    grants += b.grants;
    duration_s += b.duration_s;
    wait_us.insert(wait_us.end(), b.wait_us.begin(), b.wait_us.end());
    failed_wait_us.insert(failed_wait_us.end(), b.failed_wait_us.begin(),
                          b.failed_wait_us.end());
    gap_us.insert(gap_us.end(), b.gap_us.begin(), b.gap_us.end());
    unfairness.Add(b.unfairness);
    attempts += b.attempts;
    overlaps += b.overlaps;
    failed_acquisitions += b.failed_acquisitions;
    failed_releases += b.failed_releases;
    if (!b.last_error.empty()) last_error = b.last_error;
    cpu += b.cpu;
    requests += b.requests;
    messages += b.messages;
    same_again += b.same_again;
    masters += b.masters;
  }
  double PerGrant(double x) const { return grants > 0 ? x / grants : 0; }
  double GrantsPerS() const { return Ratio(grants, duration_s); }
  double CpuUsPerGrant() const { return PerGrant(cpu.total() * 1e6); }
  double RequestsPerGrant() const { return PerGrant(requests); }
  double CommandsPerGrant() const { return PerGrant(masters.commands); }
  double AttemptsPerGrant() const { return PerGrant(attempts); }
  double MessagesPerGrant() const { return PerGrant(messages); }
  double SameAgainShare() const { return PerGrant(same_again); }
  // The longest wait of any acquisition, won or given up.
  double LongestWaitUs() const {
    double m = 0;
    for (double w : wait_us) m = std::max(m, w);
    for (double w : failed_wait_us) m = std::max(m, w);
    return m;
  }
};

struct Block {
  Kind kind = kOurs;
  int round = 0;
  Figures figures;
};

std::string Ms(double us) { return Us(us / 1000); }

class ContentionPeerPhase : public Phase {
 public:
  explicit ContentionPeerPhase(bool quick)
      : contenders_(absl::GetFlag(FLAGS_peer_contenders)),
        rounds_(quick ? 1 : absl::GetFlag(FLAGS_peer_rounds)),
        block_(quick ? absl::Milliseconds(800)
                     : absl::GetFlag(FLAGS_peer_block)),
        ttl_(absl::GetFlag(FLAGS_peer_ttl)),
        wait_(absl::GetFlag(FLAGS_peer_wait)),
        node_{static_cast<int>(absl::ToInt64Milliseconds(wait_) /
                               kNodeRetryDelayMs),
              kNodeRetryDelayMs, kNodeRetryJitterMs, kNodeDriftFactor} {}

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      skipped_ = RunAll(ctx);
    }
    if (!skipped_.empty()) {
      Log(absl::StrCat("contention_peer: skipped: ", skipped_));
    }
    if (!node_skipped_.empty()) {
      Log(absl::StrCat("contention_peer: node-redlock not run: ",
                       node_skipped_));
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["peer_contenders"] = contenders_;
    settings["peer_rounds"] = rounds_;
    settings["peer_block_s"] = Num(absl::ToDoubleSeconds(block_));
    settings["peer_ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
    settings["peer_wait_ms"] = Num(absl::ToDoubleMilliseconds(wait_));
    node_.AddSettings("peer_", settings);
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target p99 = Unmeasured(
        "contention vs node-redlock (8 processes, no hold): p99 acquire wait "
        "≤ node-redlock's");
    Target cpu = Unmeasured(
        "contention vs node-redlock: client CPU per grant ≤ node-redlock's");
    Target stall = Unmeasured(
        "contention (ours): no TTL-long stall (longest wait and longest "
        "hand-off < TTL)");
    Target fair = Unmeasured(
        "contention (ours): most / least successful contender ≤ 1.5× in "
        "every block");
    if (ran_) {
      const Figures& o = kinds_[kOurs];
      const Figures& n = kinds_[kNode];
      const double o99 = Summarize(o.wait_us).p99;
      const double ttl_us = absl::ToDoubleMicroseconds(ttl_);
      const double longest_gap = Summarize(o.gap_us).max;
      if (node_ran_) {
        const double n99 = Summarize(n.wait_us).p99;
        p99 = {p99.what,
               absl::StrFormat("%s ms vs %s ms (%s)", Ms(o99), Ms(n99),
                               X(Ratio(o99, n99))),
               o.grants > 0 && n.grants > 0 && o99 <= n99, true};
        cpu = {cpu.what,
               absl::StrFormat("%s µs vs %s µs (%s)", Us(o.CpuUsPerGrant()),
                               Us(n.CpuUsPerGrant()),
                               X(Ratio(o.CpuUsPerGrant(), n.CpuUsPerGrant()))),
               o.grants > 0 && n.grants > 0 &&
                   o.CpuUsPerGrant() <= n.CpuUsPerGrant(),
               true};
      } else {
        p99.measured = cpu.measured =
            absl::StrCat("node-redlock not run: ", node_skipped_);
      }
      stall = {
          stall.what,
          absl::StrFormat("longest wait %s ms, longest hand-off %s ms, "
                          "TTL %s ms",
                          Ms(o.LongestWaitUs()), Ms(longest_gap), Ms(ttl_us)),
          o.grants > 0 && o.LongestWaitUs() < ttl_us && longest_gap < ttl_us,
          true};
      fair = {
          fair.what,
          absl::StrFormat("worst block %.2f× (%d / %d), blocks %s",
                          o.unfairness.Worst(), o.unfairness.most,
                          o.unfairness.least, Spread(o.unfairness.ratios, "—")),
          o.grants > 0 && o.unfairness.Worst() <= 1.5, true};
    }
    targets.push_back(p99);
    targets.push_back(cpu);
    targets.push_back(stall);
    targets.push_back(fair);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(
            &md, "Contention beside node-redlock skipped: ", skipped_, "\n\n");
      }
      return;
    }
    absl::StrAppend(
        &md, "### Contention beside node-redlock (", contenders_,
        " processes, one resource, no hold, N=", kMasters, ")\n\n",
        "Each contender is a process looping acquire (TTL ",
        absl::FormatDuration(ttl_),
        ") → release (awaited) with no hold and "
        "no pause: **ours**, a blocking `Redlock` with default options (wait ",
        absl::FormatDuration(wait_),
        "); **node-redlock** 5.0.0-beta.2 with ioredis 5, retryDelay ",
        kNodeRetryDelayMs, " ms, retryJitter ", kNodeRetryJitterMs,
        " ms (so 20–60 ms, as ours), driftFactor ", kNodeDriftFactor,
        ", retryCount ", node_.retry_count, ". ", rounds_, " rounds of one ",
        absl::FormatDuration(block_),
        " block of each (the first kind rotates by round; **ours "
        "(baseline)**, when run, is another build's contender, "
        "`--peer_baseline_contender_binary`), fresh processes per "
        "block. Wait: acquire called to returned with the lock. Hand-off: "
        "one holder's release returned to the next holder's acquire "
        "returned. Unfairness: most / least grants of one contender in a "
        "block. CPU: the contenders' own (getrusage / process.cpuUsage over "
        "their loops) per grant. Requests: what the clients sent, by their "
        "own count (ours: `MasterHealth::requests` + `subscriber_requests`; "
        "node: ioredis commands sent); commands: the masters' "
        "`total_commands_processed` (a script's inner calls included); "
        "messages: what our contenders' subscriber connections heard "
        "(`MasterHealth::subscriber_messages`; node-redlock has none). Same "
        "contender again: grants that went to the contender whose grant "
        "came just before.\n\n");
    if (!node_ran_) {
      absl::StrAppend(&md, "node-redlock not run: ", node_skipped_, ".\n\n");
    }
    absl::StrAppend(
        &md,
        "| kind | grants | grants/s | wait p50 ms | p99 ms | max ms | failed "
        "acquisitions | longest hand-off ms | unfairness (worst block) | "
        "attempts per grant | CPU µs per grant | requests per grant | "
        "masters' commands per grant | messages heard per grant | same "
        "contender again | overlapping holders |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (Kind k : {kOurs, kBaseline, kNode}) {
      if (k == kNode && !node_ran_) continue;
      if (k == kBaseline && kinds_[k].blocks == 0) continue;
      const Figures& f = kinds_[k];
      const Dist w = Summarize(f.wait_us);
      absl::StrAppend(
          &md, "| ", kKindNames[k], " | ", f.grants, " | ",
          absl::StrFormat("%.0f", f.GrantsPerS()), " | ", Ms(w.p50), " | ",
          Ms(w.p99), " | ", Ms(f.LongestWaitUs()), " | ", f.failed_acquisitions,
          " | ", Ms(Summarize(f.gap_us).max), " | ",
          absl::StrFormat("%.2f× (%d / %d)", f.unfairness.Worst(),
                          f.unfairness.most, f.unfairness.least),
          " | ", absl::StrFormat("%.2f", f.AttemptsPerGrant()), " | ",
          Us(f.CpuUsPerGrant()), " | ",
          absl::StrFormat("%.2f | %.2f | %.2f | %.0f%%", f.RequestsPerGrant(),
                          f.CommandsPerGrant(), f.MessagesPerGrant(),
                          100 * f.SameAgainShare()),
          " | ", f.overlaps, " |\n");
    }
    if (node_ran_) {
      AppendRatioRow("ours/node", kinds_[kOurs], kinds_[kNode], md);
    }
    if (kinds_[kBaseline].blocks > 0) {
      AppendRatioRow("ours/baseline", kinds_[kOurs], kinds_[kBaseline], md);
    }
    absl::StrAppend(&md,
                    "\nPer block (round, kind: grants, wait p99 ms, "
                    "unfairness, CPU µs per grant): ");
    std::vector<std::string> parts;
    for (const Block& b : blocks_) {
      const Figures& f = b.figures;
      parts.push_back(absl::StrFormat(
          "%d %s: %d, %s, %.2f×, %s", b.round + 1, kKindNames[b.kind], f.grants,
          Ms(Summarize(f.wait_us).p99), f.unfairness.Worst(),
          Us(f.CpuUsPerGrant())));
    }
    absl::StrAppend(&md, absl::StrJoin(parts, "; "), ".\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    j["node_ran"] = node_ran_;
    j["node_skipped"] = node_skipped_;
    if (ran_) {
      j["contenders"] = contenders_;
      j["masters"] = kMasters;
      for (Kind k : {kOurs, kNode, kBaseline}) {
        if (kinds_[k].blocks == 0) continue;
        j[kKindNames[k]] = FiguresJson(kinds_[k]);
      }
      Json blocks = Json::array();
      for (const Block& b : blocks_) {
        Json k = FiguresJson(b.figures);
        k["round"] = b.round;
        k["kind"] = kKindNames[b.kind];
        blocks.push_back(std::move(k));
      }
      j["blocks"] = std::move(blocks);
    }
    results["contention_peer"] = std::move(j);
  }

 private:
  // Returns why the phase did not run, or "" once ours ran.
  std::string RunAll(Context& ctx) {
    ours_binary_ = absl::GetFlag(FLAGS_peer_contender_binary);
    if (ours_binary_.empty()) {
      ours_binary_ =
          absl::StrCat(SelfDirectory(), "/redlock-e2e-handoff-contender");
    }
    if (access(ours_binary_.c_str(), X_OK) != 0) {
      return absl::StrCat("no contender binary at ", ours_binary_);
    }
    NodeRedlockPeer node = FindNodeRedlock("contender.js");
    node_binary_ = std::move(node.binary);
    node_script_ = std::move(node.script);
    node_skipped_ = std::move(node.skipped);
    std::vector<ContextPtr> info;
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<ContextPtr> c = ConnectSync(ctx.masters[i].address);
      if (!c.ok()) {
        return absl::StrCat("INFO connection: ", c.status().ToString());
      }
      info.push_back(*std::move(c));
    }
    Log(absl::StrCat("contention_peer: ", rounds_,
                     " rounds x (ours, node) "
                     "blocks of ",
                     absl::FormatDuration(block_), ", ", contenders_,
                     " contender processes"));
    std::vector<Kind> kinds = {kOurs, kNode};
    baseline_binary_ = absl::GetFlag(FLAGS_peer_baseline_contender_binary);
    if (!baseline_binary_.empty()) {
      if (access(baseline_binary_.c_str(), X_OK) != 0) {
        return absl::StrCat("no baseline contender binary at ",
                            baseline_binary_);
      }
      kinds.push_back(kBaseline);
    }
    const int n = static_cast<int>(kinds.size());
    for (int round = 0; round < rounds_; ++round) {
      for (int i = 0; i < n; ++i) {
        const Kind kind = kinds[(i + round) % n];
        if (kind == kNode && !node_skipped_.empty()) continue;
        absl::StatusOr<Figures> f = RunBlock(ctx, info, kind);
        if (!f.ok()) {
          const std::string why =
              absl::StrCat("round ", round + 1, ", ", kKindNames[kind], ": ",
                           f.status().ToString());
          // node-redlock failing to start is the peer's problem, not ours.
          if (kind == kNode) {
            node_skipped_ = why;
            continue;
          }
          return why;
        }
        kinds_[kind].Add(*f);
        blocks_.push_back({kind, round, *std::move(f)});
      }
    }
    ran_ = true;
    node_ran_ = node_skipped_.empty() && kinds_[kNode].blocks > 0;
    if (!node_ran_ && node_skipped_.empty()) node_skipped_ = "no block ran";
    return "";
  }

  std::vector<std::vector<std::string>> Args(const Options& options,
                                             Kind kind) const {
    std::vector<std::vector<std::string>> args;
    const std::string resource = "contention-peer";
    for (int i = 0; i < contenders_; ++i) {
      if (kind != kNode) {
        args.push_back({
            absl::StrCat("--id=", i),
            absl::StrCat("--key_prefix=", options.key_prefix),
            absl::StrCat("--resource=", resource),
            absl::StrCat("--ttl=", absl::FormatDuration(ttl_)),
            absl::StrCat("--wait=", absl::FormatDuration(wait_)),
            "--hold=0",
            "--think=0",
        });
        if (std::optional<absl::Duration> jitter =
                absl::GetFlag(FLAGS_peer_wake_jitter)) {
          args.back().push_back(
              absl::StrCat("--wake_jitter=", absl::FormatDuration(*jitter)));
        }
      } else {
        args.push_back({
            node_script_,
            absl::StrCat("--id=", i),
            absl::StrCat("--key=", options.key_prefix, resource, "-node"),
            absl::StrCat("--ttl_ms=", absl::ToInt64Milliseconds(ttl_)),
        });
        const std::vector<std::string> retry = node_.Args();
        args.back().insert(args.back().end(), retry.begin(), retry.end());
      }
    }
    return args;
  }

  absl::StatusOr<Figures> RunBlock(const Context& ctx,
                                   std::vector<ContextPtr>& info, Kind kind) {
    const Options options = ClientOptions(UrisOf(ctx.masters, kMasters), false);
    ContenderBlockSpec spec;
    spec.binary = kind == kOurs   ? ours_binary_
                  : kind == kNode ? node_binary_
                                  : baseline_binary_;
    spec.args = Args(options, kind);
    spec.masters = options.masters;
    spec.go_delay = absl::Milliseconds(20);
    spec.block = block_;
    spec.report_grace = 4 * wait_ + absl::Seconds(10);
    absl::StatusOr<ContenderBlock> run = RunContenderBlock(spec, info);
    if (!run.ok()) return run.status();
    const SteadyTime start = run->start;
    const SteadyTime end = run->end;
    const std::vector<std::string>& reports = run->reports;
    Figures f;
    f.blocks = 1;
    f.masters = run->masters;
    struct Timed {
      HandoffSection s;
      int contender;
    };
    std::vector<Timed> all;
    std::vector<int64_t> per_contender;
    SteadyTime last = end;
    for (int i = 0; i < contenders_; ++i) {
      absl::StatusOr<ContenderReport> r = ParseReport(reports[i]);
      if (!r.ok()) return r.status();
      per_contender.push_back(static_cast<int64_t>(r->sections.size()));
      for (const HandoffSection& s : r->sections) {
        all.push_back({s, i});
        f.attempts += s.attempts;
        last = std::max(last, FromSteadyNanos(s.release_end_ns));
      }
      for (const FailedWait& w : r->failed_waits) {
        f.failed_wait_us.push_back((w.returned_ns - w.called_ns) / 1e3);
        last = std::max(last, FromSteadyNanos(w.returned_ns));
      }
      f.failed_acquisitions += r->failed_acquisitions;
      f.failed_releases += r->failed_releases;
      if (!r->last_error.empty()) f.last_error = r->last_error;
      f.cpu += r->cpu;
      f.requests += r->requests + r->subscriber_requests;
      f.messages += r->subscriber_messages;
    }
    f.duration_s = SecondsBetween(start, last);
    std::sort(all.begin(), all.end(), [](const Timed& a, const Timed& b) {
      return a.s.acquired_ns < b.s.acquired_ns;
    });
    f.grants = static_cast<int64_t>(all.size());
    for (const Timed& t : all) {
      f.wait_us.push_back((t.s.acquired_ns - t.s.acquire_called_ns) / 1e3);
    }
    for (size_t i = 1; i < all.size(); ++i) {
      if (all[i].s.acquired_ns < all[i - 1].s.release_start_ns) ++f.overlaps;
      if (all[i].contender == all[i - 1].contender) ++f.same_again;
      f.gap_us.push_back((all[i].s.acquired_ns - all[i - 1].s.release_end_ns) /
                         1e3);
    }
    // A contender with no grant at all: as unfair as it gets.
    f.unfairness.AddBlock(per_contender);
    return f;
  }

  static void AppendRatioRow(absl::string_view name, const Figures& o,
                             const Figures& n, std::string& md) {
    const Dist ow = Summarize(o.wait_us);
    const Dist nw = Summarize(n.wait_us);
    absl::StrAppend(
        &md, "| ", name, " | ", X(Ratio(o.grants, n.grants)), " | ",
        X(Ratio(o.GrantsPerS(), n.GrantsPerS())), " | ",
        X(Ratio(ow.p50, nw.p50)), " | ", X(Ratio(ow.p99, nw.p99)), " | ",
        X(Ratio(o.LongestWaitUs(), n.LongestWaitUs())), " | | ",
        X(Ratio(Summarize(o.gap_us).max, Summarize(n.gap_us).max)), " | ",
        X(Ratio(o.unfairness.Worst(), n.unfairness.Worst())), " | ",
        X(Ratio(o.AttemptsPerGrant(), n.AttemptsPerGrant())), " | ",
        X(Ratio(o.CpuUsPerGrant(), n.CpuUsPerGrant())), " | ",
        X(Ratio(o.RequestsPerGrant(), n.RequestsPerGrant())), " | ",
        X(Ratio(o.CommandsPerGrant(), n.CommandsPerGrant())), " | ",
        X(Ratio(o.MessagesPerGrant(), n.MessagesPerGrant())), " | ",
        X(Ratio(o.SameAgainShare(), n.SameAgainShare())), " | |\n");
  }

  static Json FiguresJson(const Figures& f) {
    Json k = Json::object();
    k["grants"] = f.grants;
    k["duration_s"] = Num(f.duration_s);
    k["grants_per_s"] = Num(f.GrantsPerS());
    k["acquire_wait"] = DistJson(Summarize(f.wait_us));
    k["failed_wait"] = DistJson(Summarize(f.failed_wait_us));
    k["longest_wait_us"] = Num(f.LongestWaitUs());
    k["handoff"] = DistJson(Summarize(f.gap_us));
    k["unfairness"] = Nums(f.unfairness.ratios);
    k["worst_most"] = f.unfairness.most;
    k["worst_least"] = f.unfairness.least;
    k["attempts_per_grant"] = Num(f.AttemptsPerGrant());
    k["overlapping_holders"] = f.overlaps;
    k["failed_acquisitions"] = f.failed_acquisitions;
    k["failed_releases"] = f.failed_releases;
    k["last_error"] = f.last_error;
    k["cpu_us_per_grant"] = Num(f.CpuUsPerGrant());
    k["requests_per_grant"] = Num(f.RequestsPerGrant());
    k["commands_per_grant"] = Num(f.CommandsPerGrant());
    k["messages_heard_per_grant"] = Num(f.MessagesPerGrant());
    k["same_contender_again_share"] = Num(f.SameAgainShare());
    Json calls = Json::object();
    for (const auto& [name, n] : f.masters.calls) {
      calls[name] = Num(f.PerGrant(n));
    }
    k["calls_per_grant"] = std::move(calls);
    return k;
  }

  const int contenders_;
  const int rounds_;
  const absl::Duration block_;
  const absl::Duration ttl_;
  const absl::Duration wait_;
  const NodeRedlockSettings node_;
  std::string ours_binary_;
  std::string baseline_binary_;
  std::string node_binary_;
  std::string node_script_;
  bool ran_ = false;
  bool node_ran_ = false;
  std::string skipped_;
  std::string node_skipped_;
  Figures kinds_[kKinds];
  std::vector<Block> blocks_;
};

const RegisterPhase kRegistered(42, "contention_peer",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<ContentionPeerPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
