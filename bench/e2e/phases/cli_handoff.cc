// Copyright 2026 The redlock Authors.
//
// CLI hand-off phase: what a cron or CI user waits for. Eight shell loops
// hand one lock around, each holder running a 10ms `sh -c` child:
//
//   sh loop.sh N TOOL... sh -c 'stamp LOG S $PPID; sleep 0.01; stamp LOG E
//   $PPID'
//
// with TOOL flock(1) on a local file (the floor: the same process spawning,
// no network) and `redlock run --wait` on 5 masters (the tool built with
// this harness; also an older build with --cli_handoff_baseline_binary, for
// before/after in the same run). Every child stamps its start and end
// (redlock-e2e-stamp, CLOCK_MONOTONIC); a hand-off is the end of one child to
// the start of the next, and a start while another child is inside is an
// overlap (must be 0). Hand-offs are counted while all 8 loops run (the
// first loop to finish ends the count, so the tail with fewer waiters is
// left out). The tools run in interleaved rounds, the order rotating by
// round; each round starts fresh processes.
//
// The redlock tool also writes its milestones (REDLOCK_TIMING_FILE,
// tools/redlock/cli.h) into the same log, so each hand-off between two
// redlock processes splits into: the child's end seen (E -> the tool reaped
// it), release to grant (reaped -> the next tool holds the lock: the
// release round, the release heard by the waiter, its attempt), the
// command's start (acquired -> vfork returned, which includes the exec of
// sh) and sh starting the stamp (forked -> S). Off the hand-off path, per
// process: start-up (main -> configured -> client created), the release
// answered after the reap, and exit after the release.
//
// With the flag --cli_handoff_floor (default on), redlock-e2e-handoff-floor
// (bench/e2e/cli_handoff_floor_main.cc: libc only, none of the library's
// checks) runs in the same rounds, three ways, over the same masters: what
// the algorithm itself costs here.
//   redlock-floor-2rt   two round trips, as the library hands over: the
//                       release (DEL, PUBLISH naming the waiter queued
//                       longest), then that waiter's attempt (--queued);
//   redlock-floor-1rt   one: the release hands each master's key to the
//                       first token queued there (--granted);
//   redlock-floor-1rt-direct  the same, the release telling only the heir
//                       (on a channel of its own, --direct): no other
//                       waiter is woken by a hand-off;
//   redlock-floor-herd  two, with no queue: every waiter tries on every
//                       release.
//
// With etcd and etcdctl on PATH (Debian's etcd-server and etcd-client, which
// scripts/bench.sh unpacks into a directory of its own rather than installing:
// on a machine with systemd the package would start a system etcd) and
// --cli_handoff_etcd
// (default on), the phase starts a 3-member etcd cluster on loopback
// (bench/e2e/etcd_cluster.h, fsync on) and runs `etcdctl lock` in the same
// rounds: what a user might pick instead.
//
// Reports results.json's "cli_handoff".

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/etcd_cluster.h"
#include "bench/e2e/json.h"
#include "bench/e2e/master_counters.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/stats.h"
#include "bench/e2e/sync_client.h"

extern char** environ;

ABSL_FLAG(int, cli_handoff_loops, 8,
          "CLI hand-off phase: shell loops on one lock.");
ABSL_FLAG(int, cli_handoff_iterations, 30,
          "CLI hand-off phase: critical sections per loop per round.");
ABSL_FLAG(int, cli_handoff_rounds, 4,
          "CLI hand-off phase: rounds (one block of each tool per round).");
ABSL_FLAG(std::string, cli_handoff_tool, "",
          "CLI hand-off phase: the redlock tool. Default: tools/redlock of "
          "the build redlock-e2e-bench comes from.");
ABSL_FLAG(bool, cli_handoff_floor, true,
          "CLI hand-off phase: also run redlock-e2e-handoff-floor (the least "
          "a Redlock hand-off over the same masters needs, without the "
          "library: bench/e2e/cli_handoff_floor_main.cc) when it was built "
          "next to redlock-e2e-bench.");
ABSL_FLAG(bool, cli_handoff_no_hand_off, true,
          "cli_handoff: also run the tool with --no-hand-off (a waiter tries "
          "after each release instead of being handed the lock)");
ABSL_FLAG(bool, cli_handoff_etcd, true,
          "CLI hand-off phase: also run `etcdctl lock` on a 3-member etcd "
          "cluster on loopback, started and stopped by the phase, when etcd "
          "and etcdctl are on PATH.");
ABSL_FLAG(std::string, cli_handoff_baseline_binary, "",
          "CLI hand-off phase: another build of the redlock tool to run "
          "beside it in the same rounds (e.g. before a change); empty: none.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
constexpr absl::string_view kResource = "cli-handoff";

bool Executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

// `name` on PATH, or "".
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (Executable(candidate)) return candidate;
  }
  return "";
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One tool of the comparison.
struct Tool {
  std::string name;               // "flock", "redlock", "redlock-baseline".
  std::vector<std::string> argv;  // Before the child's `sh -c ...`.
  bool timed = false;             // Writes REDLOCK_TIMING_FILE lines.
};

// The milestones of one redlock process (tools/redlock/cli.h).
using Timing = std::map<std::string, int64_t>;

// The hand-off split, in µs, one sample per hand-off or per process.
struct Breakdown {
  std::vector<double> exit_seen;         // E -> reaped.
  std::vector<double> release_to_grant;  // reaped -> next acquired.
  std::vector<double> command_start;     // acquired -> forked.
  std::vector<double> prepare;           // acquired -> spawning.
  std::vector<double> spawn;             // spawning -> forked (vfork+exec).
  std::vector<double> sh_start;          // forked -> S.
  std::vector<double> startup;           // main -> client created.
  std::vector<double> parse;             // main -> configured.
  std::vector<double> release_answered;  // reaped -> released.
  std::vector<double> exit_after;        // released -> exit.

  void Add(const Breakdown& b) {
    auto cat = [](std::vector<double>& a, const std::vector<double>& x) {
      a.insert(a.end(), x.begin(), x.end());
    };
    cat(exit_seen, b.exit_seen);
    cat(release_to_grant, b.release_to_grant);
    cat(command_start, b.command_start);
    cat(prepare, b.prepare);
    cat(spawn, b.spawn);
    cat(sh_start, b.sh_start);
    cat(startup, b.startup);
    cat(parse, b.parse);
    cat(release_answered, b.release_answered);
    cat(exit_after, b.exit_after);
  }
};

// What one block (or every block of a tool) measured.
struct Figures {
  std::vector<double> gap_us;  // Hand-offs while every loop ran.
  int64_t sections = 0;        // Critical sections in the log (all).
  int64_t overlaps = 0;        // Starts while another child was inside.
  int64_t unmatched = 0;       // Stamps that do not pair (S without E...).
  int64_t loop_failures = 0;   // Loops that exited non-zero.
  int64_t commands = 0;        // Masters' commands over the block.
  int64_t handoffs_counted = 0;
  Breakdown split;

  void Add(const Figures& f) {
    gap_us.insert(gap_us.end(), f.gap_us.begin(), f.gap_us.end());
    sections += f.sections;
    overlaps += f.overlaps;
    unmatched += f.unmatched;
    loop_failures += f.loop_failures;
    commands += f.commands;
    handoffs_counted += f.handoffs_counted;
    split.Add(f.split);
  }
  double CommandsPerSection() const { return Ratio(commands, sections); }
};

struct Block {
  int round = 0;
  int tool = 0;
  Figures figures;
};

// Reads the log: stamps ("S ID NS", "E ID NS") and timing lines.
Figures Analyse(const std::string& log, int64_t count_until_ns, bool timed) {
  Figures f;
  struct Stamp {
    int64_t ns;
    bool start;
    std::string id;
  };
  std::vector<Stamp> stamps;
  std::map<std::string, Timing> timings;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() >= 2 && parts[0] == "timing") {
      Timing& t = timings[parts[1]];
      for (size_t i = 2; i < parts.size(); ++i) {
        std::pair<std::string, std::string> kv =
            absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
        int64_t v = 0;
        if (absl::SimpleAtoi(kv.second, &v)) t[kv.first] = v;
      }
      continue;
    }
    int64_t ns = 0;
    if (parts.size() != 3 || (parts[0] != "S" && parts[0] != "E") ||
        !absl::SimpleAtoi(parts[2], &ns)) {
      ++f.unmatched;
      continue;
    }
    stamps.push_back({ns, parts[0] == "S", parts[1]});
  }
  std::sort(stamps.begin(), stamps.end(),
            [](const Stamp& a, const Stamp& b) { return a.ns < b.ns; });
  int inside = 0;
  const Stamp* last_end = nullptr;
  auto has = [](const Timing& t, const char* k) { return t.count(k) > 0; };
  for (const Stamp& s : stamps) {
    if (!s.start) {
      if (inside == 0) {
        ++f.unmatched;
      } else {
        --inside;
      }
      last_end = &s;
      continue;
    }
    ++f.sections;
    if (inside > 0) ++f.overlaps;
    ++inside;
    if (last_end == nullptr || s.ns > count_until_ns) continue;
    f.gap_us.push_back((s.ns - last_end->ns) / 1e3);
    ++f.handoffs_counted;
    if (!timed || last_end->id == s.id) continue;
    auto prev = timings.find(last_end->id);
    auto next = timings.find(s.id);
    if (prev == timings.end() || next == timings.end()) continue;
    const Timing& a = prev->second;
    const Timing& b = next->second;
    if (!has(a, "reaped") || !has(b, "acquired") || !has(b, "forked")) {
      continue;
    }
    f.split.exit_seen.push_back((a.at("reaped") - last_end->ns) / 1e3);
    f.split.release_to_grant.push_back((b.at("acquired") - a.at("reaped")) /
                                       1e3);
    f.split.command_start.push_back((b.at("forked") - b.at("acquired")) / 1e3);
    if (has(b, "spawning")) {
      f.split.prepare.push_back((b.at("spawning") - b.at("acquired")) / 1e3);
      f.split.spawn.push_back((b.at("forked") - b.at("spawning")) / 1e3);
    }
    f.split.sh_start.push_back((s.ns - b.at("forked")) / 1e3);
  }
  for (const auto& [pid, t] : timings) {
    if (has(t, "main") && has(t, "client")) {
      f.split.startup.push_back((t.at("client") - t.at("main")) / 1e3);
    }
    if (has(t, "main") && has(t, "configured")) {
      f.split.parse.push_back((t.at("configured") - t.at("main")) / 1e3);
    }
    if (has(t, "reaped") && has(t, "released")) {
      f.split.release_answered.push_back((t.at("released") - t.at("reaped")) /
                                         1e3);
    }
    if (has(t, "released") && has(t, "exit")) {
      f.split.exit_after.push_back((t.at("exit") - t.at("released")) / 1e3);
    }
  }
  return f;
}

std::string Ms(double us) { return absl::StrFormat("%.2f", us / 1000); }

class CliHandoffPhase : public Phase {
 public:
  explicit CliHandoffPhase(bool quick)
      : loops_(absl::GetFlag(FLAGS_cli_handoff_loops)),
        iterations_(quick ? 8 : absl::GetFlag(FLAGS_cli_handoff_iterations)),
        rounds_(quick ? 1 : absl::GetFlag(FLAGS_cli_handoff_rounds)) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      skipped_ = RunAll(ctx);
    }
    if (!skipped_.empty())
      Log(absl::StrCat("cli_handoff: skipped: ", skipped_));
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["cli_handoff_loops"] = loops_;
    settings["cli_handoff_iterations"] = iterations_;
    settings["cli_handoff_rounds"] = rounds_;
    settings["cli_handoff_child"] = "sh -c 'stamp S; sleep 0.01; stamp E'";
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target median =
        Unmeasured("CLI hand-off: redlock run --wait median ≤ 1.5× flock(1)");
    Target p99 = Unmeasured("CLI hand-off: p99 ≤ 2× flock(1)");
    Target overlap = Unmeasured("CLI hand-off: no overlapping holders");
    const int ours = Index("redlock");
    const int floor = Index("flock");
    if (ran_ && ours >= 0 && floor >= 0) {
      const Dist o = Summarize(totals_[ours].gap_us);
      const Dist f = Summarize(totals_[floor].gap_us);
      median.measured = absl::StrFormat(
          "%s ms vs flock %s ms: %s (by round: %s)", Ms(o.p50), Ms(f.p50),
          X(Ratio(o.p50, f.p50)), Spread(RoundRatios(ours, 0.5)));
      median.met = o.p50 <= 1.5 * f.p50;
      median.evaluated = true;
      p99.measured = absl::StrFormat(
          "%s ms vs flock %s ms: %s (by round: %s)", Ms(o.p99), Ms(f.p99),
          X(Ratio(o.p99, f.p99)), Spread(RoundRatios(ours, 0.99)));
      p99.met = o.p99 <= 2 * f.p99;
      p99.evaluated = true;
      int64_t overlaps = 0, unmatched = 0;
      for (const Figures& t : totals_) {
        overlaps += t.overlaps;
        unmatched += t.unmatched;
      }
      overlap.measured = absl::StrCat(
          overlaps, " overlaps in ", TotalSections(), " critical sections",
          unmatched > 0 ? absl::StrCat(", ", unmatched, " unpaired stamps")
                        : "");
      // A stamp that does not pair may hide an overlap: not met then.
      overlap.met = overlaps == 0 && unmatched == 0;
      overlap.evaluated = true;
    }
    targets.push_back(median);
    targets.push_back(p99);
    targets.push_back(overlap);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "CLI hand-off skipped: ", skipped_, "\n\n");
      }
      return;
    }
    absl::StrAppend(
        &md, "### CLI hand-off (", loops_,
        " shell loops, one lock, 10 ms `sh -c` child)\n\n",
        absl::StrFormat(
            "%d rounds, each tool %d critical sections per loop per round, "
            "tools interleaved; a hand-off is one child's end to the next "
            "child's start (CLOCK_MONOTONIC stamps), counted while all %d "
            "loops run. redlock on %d masters.\n\n",
            rounds_, iterations_, loops_, kMasters),
        "| tool | hand-offs | p50 ms | p90 ms | p99 ms | × flock p50 | × flock "
        "p99 | overlaps | master commands / section |\n",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    const int floor = Index("flock");
    for (size_t i = 0; i < tools_.size(); ++i) {
      const Figures& t = totals_[i];
      const Dist d = Summarize(t.gap_us);
      const Dist f = floor >= 0 ? Summarize(totals_[floor].gap_us) : Dist();
      absl::StrAppend(
          &md,
          absl::StrFormat(
              "| %s | %d | %s | %s | %s | %s | %s | %d | %s |\n",
              tools_[i].name, d.count, Ms(d.p50), Ms(d.p90), Ms(d.p99),
              X(Ratio(d.p50, f.p50)), X(Ratio(d.p99, f.p99)), t.overlaps,
              tools_[i].timed ? absl::StrFormat("%.1f", t.CommandsPerSection())
                              : "—"));
    }
    if (Index("etcdctl lock") < 0) {
      absl::StrAppend(&md, "| etcdctl lock | not run: ", etcd_note_,
                      " | | | | | | | |\n");
    }
    absl::StrAppend(&md, "\n");
    absl::StrAppend(
        &md,
        "Where a redlock hand-off goes (medians, ms; from the tool's "
        "REDLOCK_TIMING_FILE milestones):\n\n",
        "| tool | child end seen | release → next grant | command start "
        "(prepare + fork/exec) | sh → stamp | total | start-up (main → "
        "client) | release answered | exit after release |\n",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < tools_.size(); ++i) {
      const Breakdown& b = totals_[i].split;
      // A tool older than its milestones (the baseline's) wrote none.
      if (!tools_[i].timed || b.exit_seen.empty()) continue;
      absl::StrAppend(
          &md,
          absl::StrFormat("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                          tools_[i].name, Ms(Median(b.exit_seen)),
                          Ms(Median(b.release_to_grant)),
                          b.prepare.empty()
                              ? Ms(Median(b.command_start))
                              : absl::StrCat(Ms(Median(b.command_start)), " (",
                                             Ms(Median(b.prepare)), " + ",
                                             Ms(Median(b.spawn)), ")"),
                          Ms(Median(b.sh_start)), Ms(Median(totals_[i].gap_us)),
                          Ms(Median(b.startup)), Ms(Median(b.release_answered)),
                          Ms(Median(b.exit_after))));
    }
    absl::StrAppend(&md, "\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    j["etcdctl"] = Index("etcdctl lock") >= 0
                       ? absl::StrCat("ran: ", etcd_note_)
                       : absl::StrCat("not run: ", etcd_note_);
    if (ran_) {
      Json tools = Json::object();
      for (size_t i = 0; i < tools_.size(); ++i) {
        const Figures& t = totals_[i];
        Json k = Json::object();
        k["command"] = absl::StrJoin(tools_[i].argv, " ");
        k["sections"] = t.sections;
        k["handoff"] = DistJson(Summarize(t.gap_us));
        k["overlaps"] = t.overlaps;
        k["unmatched_stamps"] = t.unmatched;
        k["loop_failures"] = t.loop_failures;
        if (tools_[i].timed) {
          k["master_commands_per_section"] = Num(t.CommandsPerSection());
          Json s = Json::object();
          s["child_end_seen"] = DistJson(Summarize(t.split.exit_seen));
          s["release_to_next_grant"] =
              DistJson(Summarize(t.split.release_to_grant));
          s["command_start"] = DistJson(Summarize(t.split.command_start));
          s["command_prepare"] = DistJson(Summarize(t.split.prepare));
          s["command_vfork_exec"] = DistJson(Summarize(t.split.spawn));
          s["sh_to_stamp"] = DistJson(Summarize(t.split.sh_start));
          s["startup_main_to_client"] = DistJson(Summarize(t.split.startup));
          s["parse_main_to_configured"] = DistJson(Summarize(t.split.parse));
          s["release_answered_after_reap"] =
              DistJson(Summarize(t.split.release_answered));
          s["exit_after_release"] = DistJson(Summarize(t.split.exit_after));
          k["breakdown_us"] = std::move(s);
        }
        const int floor = Index("flock");
        if (floor >= 0 && static_cast<int>(i) != floor) {
          k["p50_vs_flock_by_round"] = Nums(RoundRatios(i, 0.5));
          k["p99_vs_flock_by_round"] = Nums(RoundRatios(i, 0.99));
        }
        tools[tools_[i].name] = std::move(k);
      }
      j["tools"] = std::move(tools);
    }
    results["cli_handoff"] = std::move(j);
  }

 private:
  int Index(absl::string_view name) const {
    for (size_t i = 0; i < tools_.size(); ++i) {
      if (tools_[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  int64_t TotalSections() const {
    int64_t n = 0;
    for (const Figures& t : totals_) n += t.sections;
    return n;
  }

  // The quantile `q` of tool `i` over flock's, per round.
  std::vector<double> RoundRatios(int i, double q) const {
    std::vector<double> rr;
    const int floor = Index("flock");
    for (int round = 0; round < rounds_; ++round) {
      double ours = 0, theirs = 0;
      for (const Block& b : blocks_) {
        if (b.round != round) continue;
        std::vector<double> g = b.figures.gap_us;
        std::sort(g.begin(), g.end());
        if (g.empty()) continue;
        if (b.tool == i) ours = Quantile(g, q);
        if (b.tool == floor) theirs = Quantile(g, q);
      }
      if (ours > 0 && theirs > 0) rr.push_back(ours / theirs);
    }
    return rr;
  }

  // Returns why the phase did not run, or "" once it ran.
  std::string RunAll(Context& ctx) {
    const std::string dir = SelfDirectory();
    stamp_ = absl::StrCat(dir, "/redlock-e2e-stamp");
    if (!Executable(stamp_)) {
      return absl::StrCat("no ", stamp_, " (built with redlock-e2e-bench)");
    }
    std::string tool = absl::GetFlag(FLAGS_cli_handoff_tool);
    if (tool.empty()) tool = absl::StrCat(dir, "/../tools/redlock");
    if (!Executable(tool)) return absl::StrCat("no redlock tool at ", tool);
    const std::string flock = OnPath("flock");
    if (flock.empty()) return "flock(1) not on PATH (util-linux)";
    sh_ = OnPath("sh");
    if (sh_.empty()) return "no sh on PATH";
    const std::string etcd = OnPath("etcd");
    const std::string etcdctl = OnPath("etcdctl");
    etcd_note_ = etcd.empty() || etcdctl.empty() ? "etcd/etcdctl not installed"
                                                 : "--cli_handoff_etcd=false";

    char tmpl[] = "/tmp/redlock-cli-handoff-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    tmp_ = tmpl;
    loop_script_ = absl::StrCat(tmp_, "/loop.sh");
    {
      std::ofstream script(loop_script_);
      // N, then the command: runs it N times, stops at the first that the
      // tool itself failed (exit status >= 64 is the tool's own, see
      // docs/cli.md; the child exits 0).
      script << "n=$1; shift; i=0\n"
                "while [ \"$i\" -lt \"$n\" ]; do\n"
                "  \"$@\" || exit $?\n"
                "  i=$((i+1))\n"
                "done\n";
      if (!script) return "cannot write the loop script";
    }

    tools_.push_back(
        {"flock", {flock, absl::StrCat(tmp_, "/flock.lock")}, false});
    const std::vector<std::string> run_args = {
        "run",
        "--quiet",
        "--wait=60s",
        "--ttl=10s",
        "--key-prefix=redlock-bench:cli-handoff:",
        std::string(kResource),
        "--"};
    Tool ours{"redlock", {tool}, true};
    ours.argv.insert(ours.argv.end(), run_args.begin(), run_args.end());
    tools_.push_back(ours);
    if (absl::GetFlag(FLAGS_cli_handoff_no_hand_off)) {
      // The same tool with the waiter trying after each release (two round
      // trips from the release to the next holder): the hand-off's worth.
      Tool two{"redlock-no-hand-off", {tool}, true};
      two.argv.insert(two.argv.end(), run_args.begin(), run_args.end());
      two.argv.insert(two.argv.begin() + 2, "--no-hand-off");
      tools_.push_back(two);
    }
    const std::string floor_tool =
        absl::StrCat(dir, "/redlock-e2e-handoff-floor");
    if (absl::GetFlag(FLAGS_cli_handoff_floor) && Executable(floor_tool)) {
      const std::pair<const char*, const char*> floors[] = {
          {"redlock-floor-2rt", "--queued"},
          {"redlock-floor-1rt", "--granted"},
          {"redlock-floor-1rt-direct", "--direct"},
          {"redlock-floor-herd", nullptr}};
      for (const auto& [name, mode] : floors) {
        Tool floor{name, {floor_tool}, true};
        if (mode != nullptr) floor.argv.push_back(mode);
        floor.argv.insert(floor.argv.end(), run_args.begin(), run_args.end());
        tools_.push_back(floor);
      }
    }
    if (!etcd.empty() && !etcdctl.empty() &&
        absl::GetFlag(FLAGS_cli_handoff_etcd)) {
      absl::StatusOr<std::unique_ptr<EtcdCluster>> cluster =
          EtcdCluster::Start(etcd, etcdctl, tmp_, 3);
      if (cluster.ok()) {
        etcd_ = *std::move(cluster);
        etcd_note_ = "3 members on loopback, fsync on";
        tools_.push_back(
            {"etcdctl lock",
             {etcdctl, absl::StrCat("--endpoints=", etcd_->endpoints()), "lock",
              std::string(kResource), "--"},
             false});
      } else {
        etcd_note_ = cluster.status().ToString();
      }
    }
    const std::string baseline =
        absl::GetFlag(FLAGS_cli_handoff_baseline_binary);
    if (!baseline.empty()) {
      if (!Executable(baseline))
        return absl::StrCat("no baseline at ", baseline);
      Tool before{"redlock-baseline", {baseline}, true};
      before.argv.insert(before.argv.end(), run_args.begin(), run_args.end());
      tools_.push_back(before);
    }
    masters_env_ = absl::StrCat(
        "REDLOCK_MASTERS=", absl::StrJoin(UrisOf(ctx.masters, kMasters), ","));

    std::vector<ContextPtr> info;
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<ContextPtr> c = ConnectSync(ctx.masters[i].address);
      if (!c.ok()) {
        return absl::StrCat("INFO connection: ", c.status().ToString());
      }
      info.push_back(*std::move(c));
    }
    totals_.resize(tools_.size());
    Log(absl::StrCat("cli_handoff: ", rounds_, " rounds x ", tools_.size(),
                     " tools, ", loops_, " loops x ", iterations_,
                     " sections"));
    for (int round = 0; round < rounds_; ++round) {
      for (size_t k = 0; k < tools_.size(); ++k) {
        const int t = static_cast<int>((k + round) % tools_.size());
        absl::StatusOr<Figures> f = RunBlock(info, t, round);
        if (!f.ok()) {
          return absl::StrCat("round ", round + 1, ", ", tools_[t].name, ": ",
                              f.status().ToString());
        }
        Log(
            absl::StrFormat("cli_handoff: round %d %s: p50 %s ms p99 %s ms, "
                            "%d overlaps",
                            round + 1, tools_[t].name, Ms(Median(f->gap_us)),
                            Ms(Summarize(f->gap_us).p99), f->overlaps));
        totals_[t].Add(*f);
        blocks_.push_back({round, t, *std::move(f)});
      }
    }
    ran_ = true;
    etcd_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(tmp_, ignored);
    return "";
  }

  absl::StatusOr<Figures> RunBlock(std::vector<ContextPtr>& info, int t,
                                   int round) {
    const Tool& tool = tools_[t];
    const std::string log =
        absl::StrCat(tmp_, "/", tool.name, "-", round, ".log");
    // The child: a shell that stamps, sleeps 10ms, stamps; $PPID is the
    // tool's PID (the redlock tool's timing lines carry it too).
    const std::string child = absl::StrCat(
        "\"$0\" \"$1\" S $PPID; sleep 0.01; \"$0\" \"$1\" E $PPID");
    std::vector<std::string> argv = {sh_, loop_script_,
                                     absl::StrCat(iterations_)};
    argv.insert(argv.end(), tool.argv.begin(), tool.argv.end());
    argv.insert(argv.end(), {sh_, "-c", child, stamp_, log});
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const absl::string_view entry(*e);
      if (absl::StartsWith(entry, "REDLOCK_")) continue;
      env.emplace_back(entry);
    }
    env.push_back(masters_env_);
    if (tool.timed) env.push_back(absl::StrCat("REDLOCK_TIMING_FILE=", log));
    std::vector<char*> cenv;
    for (std::string& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);

    absl::StatusOr<MasterCounters> before = ReadAll(info);
    if (!before.ok()) return before.status();
    std::vector<pid_t> pids;
    for (int i = 0; i < loops_; ++i) {
      posix_spawnattr_t attr;
      posix_spawnattr_init(&attr);
      // Its own group, so that a loop left behind is killed with its tools.
      posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
      posix_spawnattr_setpgroup(&attr, 0);
      pid_t pid = -1;
      const int err = posix_spawn(&pid, sh_.c_str(), nullptr, &attr,
                                  cargv.data(), cenv.data());
      posix_spawnattr_destroy(&attr);
      if (err != 0) {
        KillAll(pids);
        return absl::InternalError(
            absl::StrCat("posix_spawn: ", strerror(err)));
      }
      pids.push_back(pid);
    }
    Figures f;
    int64_t first_done_ns = 0;
    const int64_t deadline = MonotonicNs() + int64_t{120} * 1000000000;
    size_t left = pids.size();
    std::vector<bool> done(pids.size(), false);
    while (left > 0) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        int status = 0;
        if (waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
        done[i] = true;
        --left;
        if (first_done_ns == 0) first_done_ns = MonotonicNs();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++f.loop_failures;
      }
      if (left == 0) break;
      if (MonotonicNs() > deadline) {
        std::vector<pid_t> running;
        for (size_t i = 0; i < pids.size(); ++i) {
          if (!done[i]) running.push_back(pids[i]);
        }
        KillAll(running);
        return absl::DeadlineExceededError("loops still running after 120s");
      }
      usleep(2000);
    }
    absl::StatusOr<MasterCounters> after = ReadAll(info);
    if (!after.ok()) return after.status();
    Figures a = Analyse(log, first_done_ns, tool.timed);
    a.loop_failures = f.loop_failures;
    MasterCounters delta = *after - *before;
    delta.RemoveInfo(kMasters);
    a.commands = delta.commands;
    if (a.loop_failures > 0) {
      return absl::InternalError(
          absl::StrCat(a.loop_failures, " loops failed (see stderr)"));
    }
    return a;
  }

  static void KillAll(const std::vector<pid_t>& pids) {
    for (pid_t pid : pids) kill(-pid, SIGKILL);
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
  }

  static absl::StatusOr<MasterCounters> ReadAll(std::vector<ContextPtr>& info) {
    MasterCounters sum;
    for (ContextPtr& c : info) {
      absl::StatusOr<MasterCounters> one = ReadMasterCounters(c.get());
      if (!one.ok()) return one.status();
      sum += *one;
    }
    return sum;
  }

  const int loops_;
  const int iterations_;
  const int rounds_;
  std::string stamp_;
  std::string sh_;
  std::string tmp_;
  std::string loop_script_;
  std::string masters_env_;
  std::string etcd_note_ = "phase did not run";
  std::unique_ptr<EtcdCluster> etcd_;  // While the rounds run.
  std::vector<Tool> tools_;
  bool ran_ = false;
  std::string skipped_;
  std::vector<Figures> totals_;
  std::vector<Block> blocks_;
};

const RegisterPhase kRegistered(48, "cli_handoff",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<CliHandoffPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
