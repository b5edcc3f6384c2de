// Copyright 2026 The redlock Authors.
//
// Leader election beside etcd's (issue 49): how long an election is without
// a leader when the leader dies, and when it steps down, for our CLI and
// for etcd in the same run, in interleaved rounds (which tool goes first
// rotates by round), each round a fresh election name and fresh processes.
//
// Per tool and round: three candidate processes campaign (the first to
// start leads), and optionally an observer. Then
//   resign    (--election_resigns times) the leader steps down: ours, its
//             command exits (SIGTERM to it; `redlock elect` then resigns);
//             etcdctl / etcd3, SIGTERM to the candidate, which resigns
//             (revokes its lease). A fresh candidate takes its place, so
//             there are always three.
//   failover  the leader dies: SIGKILL to the candidate's process group
//             (and to its command), nothing released; the lease must
//             expire (TTL) before another candidate can lead. The kill
//             comes after a random pause of up to TTL/3 (one keep-alive
//             period), so that it lands at a random phase of the lease.
// measuring from the signal to the next leader seen: ours, its command's
// first instruction (the command is `sh -c 'redlock-e2e-stamp LOG S ID;
// exec sleep 3600'`, which stamps CLOCK_MONOTONIC on start); etcd, the line
// the elected candidate prints (read here from its stdout pipe, timestamped
// on arrival). An etcd user's own command would start after that line (no
// `--`), so the etcd figures are a floor for it, ours includes the fork and
// exec of the command. The observer's lag is the time from the new leader
// (as above) to the observer's line naming it.
//
// Tools:
//   redlock elect   `redlock elect --ttl=T --value=cN NAME -- COMMAND` on 5
//                   masters (the tool of this build), observer `redlock
//                   elect NAME --listen`.
//   etcdctl elect   `etcdctl elect NAME cN` on a 3-member etcd on loopback
//                   (etcd_cluster.h, fsync on), observer `etcdctl elect
//                   --listen NAME`. etcdctl 3.4's session lease is always
//                   60 s (no TTL flag), so its failover is measured only
//                   with --election_etcdctl_failover (40-60 s a sample,
//                   after a random pause of up to 20 s).
//   etcd3 election  the same recipe with the lease TTL T (etcd3, the Node
//                   client: bench/peers/etcd3/election.js, installed by
//                   scripts/bench.sh into --election_etcd3_dir), on the same
//                   etcd cluster: the failover beside ours at equal TTL.
//
// Both keep their lease alive every TTL/3, so a leader killed at a random
// moment leaves between 2/3 TTL and a whole TTL of lease behind; the
// failover is reported in ms and as a fraction of the TTL.
//
// Without etcd and etcdctl on PATH (Debian: etcd-server, etcd-client;
// scripts/bench.sh installs them) the etcd rows are "not run", and so is
// the etcd3 row without node or --election_etcd3_dir. Reports
// results.json's "election".

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
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
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/etcd_cluster.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/stats.h"

extern char** environ;

ABSL_FLAG(int, election_rounds, 8,
          "Election phase: rounds (each tool once per round, order "
          "rotating); one failover per tool per round.");
ABSL_FLAG(int, election_resigns, 2,
          "Election phase: resignations per tool per round.");
ABSL_FLAG(absl::Duration, election_ttl, absl::Seconds(2),
          "Election phase: the lease TTL of ours and of the etcd3 row (etcd "
          "rounds a lease up to whole seconds, and refuses less than about "
          "2 s with its default heartbeat).");
ABSL_FLAG(absl::Duration, election_settle, absl::Milliseconds(300),
          "Election phase: pause once every candidate campaigns, before the "
          "leader is signalled.");
ABSL_FLAG(std::string, election_tool, "",
          "Election phase: the redlock tool. Default: tools/redlock of the "
          "build redlock-e2e-bench comes from.");
ABSL_FLAG(bool, election_etcd, true,
          "Election phase: run the etcd rows (a 3-member etcd on loopback, "
          "started and stopped by the phase) when etcd and etcdctl are on "
          "PATH.");
ABSL_FLAG(std::string, election_etcd3_dir, "",
          "Election phase: a directory with bench/peers/etcd3/election.js "
          "and its node_modules (npm install there); empty: no etcd3 row.");
ABSL_FLAG(bool, election_etcdctl_failover, false,
          "Election phase: also kill etcdctl elect leaders (its session "
          "lease is 60 s: each sample takes 40-60 s).");
ABSL_FLAG(bool, election_observers, true,
          "Election phase: run an observer per tool (--listen) and report "
          "its lag behind the new leader.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
constexpr int kCandidates = 3;

enum Kind { kOurs = 0, kEtcdctl = 1, kEtcd3 = 2 };
constexpr int kKinds = 3;
constexpr const char* kKindNames[] = {"redlock elect", "etcdctl elect",
                                      "etcd3 election (node)"};

enum Event { kResign = 0, kFailover = 1 };
constexpr int kEvents = 2;
constexpr const char* kEventNames[] = {"resign", "failover"};

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void SleepNs(int64_t ns) {
  if (ns <= 0) return;
  const timespec t{static_cast<time_t>(ns / 1000000000),
                   static_cast<long>(ns % 1000000000)};
  nanosleep(&t, nullptr);
}

// "/proc/loadavg"'s first three fields, or "unknown".
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

std::string Ms(double us) {
  return us >= 100000 ? absl::StrFormat("%.0f", us / 1000)
                      : absl::StrFormat("%.1f", us / 1000);
}

// One process this phase started: its own process group (so that a kill
// reaches whatever it started in that group), stdout on a pipe we read
// (or /dev/null), stderr appended to the phase's log.
struct Proc {
  pid_t pid = -1;
  int out = -1;  // Read end of its stdout, non-blocking; -1: none.
  std::string partial;
  std::string value;  // A candidate's value ("" for an observer).
  bool observer = false;
  bool campaigning = false;  // etcd3: said so; others: assumed.
  bool elected = false;
  int64_t elected_ns = 0;
  pid_t command = -1;  // Ours: the command's PID, from its stamp.
  bool reaped = false;
  int status = 0;
};

// A leader as someone saw it: the candidate itself (or its command) when
// `observed` is false, the observer otherwise.
struct Seen {
  std::string value;
  int64_t ns = 0;
  bool observed = false;
};

pid_t SpawnProcess(const std::vector<std::string>& argv,
                   const std::vector<std::string>& env, bool capture,
                   const std::string& err_log, int* out_fd) {
  int fds[2] = {-1, -1};
  if (capture && pipe2(fds, O_CLOEXEC) != 0) return -1;
  std::vector<char*> cargv, cenv;
  for (const std::string& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    if (capture) {
      close(fds[0]);
      close(fds[1]);
    }
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    const int in = open("/dev/null", O_RDONLY);
    const int err = open(err_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int out = capture ? fds[1] : open("/dev/null", O_WRONLY);
    if (in >= 0) dup2(in, STDIN_FILENO);
    if (out >= 0) dup2(out, STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  setpgid(pid, pid);  // Also here: whichever runs first.
  if (capture) {
    close(fds[1]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    *out_fd = fds[0];
  }
  return pid;
}

// Whether `pid` still runs a command of ours (`exec sleep 3600`): its PID
// came from a stamp, and once its redlock reaped it the PID may be reused.
bool IsOurCommand(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"));
  std::string cmdline((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  return cmdline == std::string("sleep\0003600\0", 11);
}

// One tool's samples, all rounds, in µs; per round for the ratios.
struct Samples {
  std::vector<double> time[kEvents];
  std::vector<double> observer_lag[kEvents];
  std::vector<std::vector<double>> by_round[kEvents];  // [event][round].
};

class ElectionPhase : public Phase {
 public:
  explicit ElectionPhase(bool quick)
      : rounds_(quick ? 1 : absl::GetFlag(FLAGS_election_rounds)),
        resigns_(quick ? 1 : absl::GetFlag(FLAGS_election_resigns)),
        ttl_(absl::GetFlag(FLAGS_election_ttl)),
        settle_(absl::GetFlag(FLAGS_election_settle)) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      load_before_ = LoadAverage();
      skipped_ = RunAll(ctx);
      load_after_ = LoadAverage();
    }
    Teardown();
    etcd_.reset();
    if (!tmp_.empty() && skipped_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(tmp_, ignored);
    }
    if (!skipped_.empty()) {
      Log(absl::StrCat(
          "election: skipped: ", skipped_,
          tmp_.empty() ? "" : absl::StrCat(" (logs in ", tmp_, ")")));
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["election_rounds"] = rounds_;
    settings["election_resigns"] = resigns_;
    settings["election_ttl_ms"] = absl::ToInt64Milliseconds(ttl_);
    settings["election_settle_ms"] = absl::ToInt64Milliseconds(settle_);
    settings["election_candidates"] = kCandidates;
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "Leader election skipped: ", skipped_, "\n\n");
      }
      return;
    }
    const double ttl_us = absl::ToDoubleMicroseconds(ttl_);
    absl::StrAppend(
        &md, "### Leader election: failover and resignation, beside etcd\n\n",
        absl::StrFormat(
            "%d rounds, the tools interleaved (order rotating by round), "
            "each round %d candidates per tool on a fresh election name; per "
            "round and tool %d resignation(s) and one leader killed "
            "(SIGKILL, at a random phase of the keep-alive). Lease TTL %s for "
            "`redlock elect` and the etcd3 row; "
            "`etcdctl elect`'s session lease is 60 s (fixed in etcdctl "
            "3.4). Ours: %d masters; etcd: %s. Time from the signal to the "
            "next leader: ours, its "
            "command's first stamp; etcd, the elected candidate's line. Load "
            "average before / after: %s / %s.\n\n",
            rounds_, kCandidates, resigns_, absl::FormatDuration(ttl_),
            kMasters, etcd_note_, load_before_, load_after_),
        "| event | tool | median ms | p90 ms | max ms | median ÷ TTL | n | "
        "ours ÷ this, median | ours ÷ this, p90 | median ratio by round "
        "(min / median / max) |\n"
        "|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
    for (int e = 0; e < kEvents; ++e) {
      for (int k = 0; k < kKinds; ++k) {
        if (!ran_kind_[k]) continue;
        const Samples& s = samples_[k];
        if (s.time[e].empty()) {
          if (k == kEtcdctl && e == kFailover) {
            absl::StrAppend(&md, "| ", kEventNames[e], " | ", kKindNames[k],
                            " | not measured: 60 s session lease (40–60 s "
                            "a sample; --election_etcdctl_failover) | | | | "
                            "| | | |\n");
          }
          continue;
        }
        const Dist d = Summarize(s.time[e]);
        // A resignation does not wait for the lease: no fraction of it.
        const std::string fraction =
            e == kResign
                ? "—"
                : absl::StrFormat("%.2f", k == kEtcdctl ? d.p50 / 60e6
                                                        : Ratio(d.p50, ttl_us));
        std::string ratio = "—", ratio90 = "—", spread;
        if (k != kOurs && !samples_[kOurs].time[e].empty()) {
          const Dist ours = Summarize(samples_[kOurs].time[e]);
          ratio = X(Ratio(ours.p50, d.p50));
          ratio90 = X(Ratio(ours.p90, d.p90));
          spread = Spread(RoundRatios(k, static_cast<Event>(e)));
        }
        absl::StrAppend(
            &md, absl::StrFormat(
                     "| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n",
                     kEventNames[e], kKindNames[k], Ms(d.p50), Ms(d.p90),
                     Ms(d.max), fraction, d.count, ratio, ratio90, spread));
      }
    }
    absl::StrAppend(&md, "\n");
    bool any_lag = false;
    for (int k = 0; k < kKinds; ++k) {
      for (int e = 0; e < kEvents; ++e) {
        any_lag = any_lag || !samples_[k].observer_lag[e].empty();
      }
    }
    if (any_lag) {
      absl::StrAppend(
          &md,
          "Observer lag: from the new leader (as above) to the observer's "
          "line naming it (ours: `redlock elect NAME --listen`; etcd: "
          "`etcdctl elect --listen`, etcd3's observe()). Negative: the "
          "observer printed first (ours: before the new leader's command "
          "started).\n\n"
          "| after | tool | median ms | p90 ms | max ms | n |\n"
          "|---|---|--:|--:|--:|--:|\n");
      for (int e = 0; e < kEvents; ++e) {
        for (int k = 0; k < kKinds; ++k) {
          const std::vector<double>& lag = samples_[k].observer_lag[e];
          if (lag.empty()) continue;
          const Dist d = Summarize(lag);
          absl::StrAppend(
              &md, absl::StrFormat("| %s | %s | %s | %s | %s | %d |\n",
                                   kEventNames[e], kKindNames[k], Ms(d.p50),
                                   Ms(d.p90), Ms(d.max), d.count));
        }
      }
      absl::StrAppend(&md, "\n");
    }
    for (int k = 0; k < kKinds; ++k) {
      if (!ran_kind_[k] && !not_run_[k].empty()) {
        absl::StrAppend(&md, kKindNames[k], " not run: ", not_run_[k], ".\n\n");
      }
    }
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    j["ttl_ms"] = absl::ToInt64Milliseconds(ttl_);
    j["etcd"] = etcd_note_;
    j["load_before"] = load_before_;
    j["load_after"] = load_after_;
    Json tools = Json::object();
    for (int k = 0; k < kKinds; ++k) {
      Json t = Json::object();
      t["ran"] = ran_kind_[k];
      if (!ran_kind_[k]) t["not_run"] = not_run_[k];
      t["candidate"] = commands_[k];
      t["ttl_ms"] = k == kEtcdctl ? 60000 : absl::ToInt64Milliseconds(ttl_);
      for (int e = 0; e < kEvents; ++e) {
        const Samples& s = samples_[k];
        if (s.time[e].empty()) continue;
        Json ev = Json::object();
        ev["time"] = DistJson(Summarize(s.time[e]));
        ev["samples_us"] = Nums(s.time[e]);
        if (!s.observer_lag[e].empty()) {
          ev["observer_lag"] = DistJson(Summarize(s.observer_lag[e]));
        }
        if (k != kOurs && !samples_[kOurs].time[e].empty()) {
          const Dist ours = Summarize(samples_[kOurs].time[e]);
          const Dist theirs = Summarize(s.time[e]);
          ev["ours_over_this_p50"] = Num(Ratio(ours.p50, theirs.p50));
          ev["ours_over_this_p90"] = Num(Ratio(ours.p90, theirs.p90));
          ev["ours_over_this_p50_by_round"] =
              Nums(RoundRatios(k, static_cast<Event>(e)));
        }
        t[kEventNames[e]] = std::move(ev);
      }
      tools[kKindNames[k]] = std::move(t);
    }
    j["tools"] = std::move(tools);
    results["election"] = std::move(j);
  }

 private:
  // Ours' median over tool k's, per round where both have samples.
  std::vector<double> RoundRatios(int k, Event e) const {
    std::vector<double> rr;
    const auto& ours = samples_[kOurs].by_round[e];
    const auto& theirs = samples_[k].by_round[e];
    for (size_t r = 0; r < ours.size() && r < theirs.size(); ++r) {
      if (ours[r].empty() || theirs[r].empty()) continue;
      rr.push_back(Ratio(Median(ours[r]), Median(theirs[r])));
    }
    return rr;
  }

  // Returns why the phase did not run, or "" once it ran.
  std::string RunAll(Context& ctx) {
    const std::string dir = SelfDirectory();
    stamp_ = absl::StrCat(dir, "/redlock-e2e-stamp");
    if (access(stamp_.c_str(), X_OK) != 0) {
      return absl::StrCat("no ", stamp_, " (built with redlock-e2e-bench)");
    }
    tool_ = absl::GetFlag(FLAGS_election_tool);
    if (tool_.empty()) tool_ = absl::StrCat(dir, "/../tools/redlock");
    if (access(tool_.c_str(), X_OK) != 0) {
      return absl::StrCat("no redlock tool at ", tool_);
    }
    sh_ = FindOnPath("sh");
    if (sh_.empty()) return "no sh on PATH";
    char tmpl[] = "/tmp/redlock-election-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    tmp_ = tmpl;
    err_log_ = absl::StrCat(tmp_, "/stderr.log");
    stamp_log_ = absl::StrCat(tmp_, "/stamps.log");

    // The environment of every child: ours without any REDLOCK_ variable
    // but the masters.
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const absl::string_view entry(*e);
      if (absl::StartsWith(entry, "REDLOCK_") ||
          absl::StartsWith(entry, "ETCDCTL_")) {
        continue;
      }
      env_.emplace_back(entry);
    }
    env_.push_back(absl::StrCat(
        "REDLOCK_MASTERS=", absl::StrJoin(UrisOf(ctx.masters, kMasters), ",")));
    env_.push_back("ETCDCTL_API=3");

    // Does this tool elect? (The subcommand came with issue 49.)
    {
      const std::optional<std::string> help = RunCapture({tool_, "--help"});
      if (!help.has_value() || !absl::StrContains(*help, "redlock elect")) {
        return absl::StrCat(tool_, " has no elect subcommand");
      }
    }
    ran_kind_[kOurs] = true;
    commands_[kOurs] = absl::StrCat(
        "redlock elect --ttl=", absl::FormatDuration(ttl_),
        " --value=cN --key-prefix=redlock-bench:election: NAME -- sh -c "
        "'redlock-e2e-stamp LOG S cN:$$; exec sleep 3600'");

    etcd_note_ = "not run";
    const std::string etcd = FindOnPath("etcd");
    etcdctl_ = FindOnPath("etcdctl");
    if (!absl::GetFlag(FLAGS_election_etcd)) {
      not_run_[kEtcdctl] = not_run_[kEtcd3] = "--election_etcd=false";
    } else if (etcd.empty() || etcdctl_.empty()) {
      not_run_[kEtcdctl] = not_run_[kEtcd3] =
          "etcd/etcdctl not on PATH (Debian: etcd-server, etcd-client)";
    } else {
      absl::StatusOr<std::unique_ptr<EtcdCluster>> cluster =
          EtcdCluster::Start(etcd, etcdctl_, tmp_, 3);
      if (!cluster.ok()) {
        not_run_[kEtcdctl] = not_run_[kEtcd3] = cluster.status().ToString();
      } else {
        etcd_ = *std::move(cluster);
        etcd_note_ = "3 members on loopback, fsync on";
        ran_kind_[kEtcdctl] = true;
        commands_[kEtcdctl] = "etcdctl elect NAME cN";
        const std::string peer_dir = absl::GetFlag(FLAGS_election_etcd3_dir);
        node_ = FindOnPath("node");
        if (peer_dir.empty()) {
          not_run_[kEtcd3] =
              "no --election_etcd3_dir (scripts/bench.sh "
              "installs bench/peers/etcd3)";
        } else if (node_.empty()) {
          not_run_[kEtcd3] = "no node on PATH";
        } else if (!std::filesystem::exists(peer_dir + "/election.js") ||
                   !std::filesystem::exists(peer_dir + "/node_modules/etcd3")) {
          not_run_[kEtcd3] = absl::StrCat(
              peer_dir, " has no election.js and node_modules/etcd3");
        } else {
          etcd3_script_ = peer_dir + "/election.js";
          ran_kind_[kEtcd3] = true;
          commands_[kEtcd3] =
              absl::StrCat("node election.js --name=NAME --value=cN --ttl=",
                           absl::ToInt64Seconds(ttl_));
        }
      }
    }

    std::vector<Kind> kinds;
    for (int k = 0; k < kKinds; ++k) {
      if (ran_kind_[k]) kinds.push_back(static_cast<Kind>(k));
      for (int e = 0; e < kEvents; ++e) samples_[k].by_round[e].resize(rounds_);
    }
    Log(absl::StrCat("election: ", rounds_, " rounds x ", kinds.size(),
                     " tools, ", resigns_,
                     " resignation(s) + 1 failover "
                     "each, TTL ",
                     absl::FormatDuration(ttl_)));
    for (int round = 0; round < rounds_; ++round) {
      for (size_t i = 0; i < kinds.size(); ++i) {
        const Kind k = kinds[(i + round) % kinds.size()];
        const std::string why = RunRound(k, round);
        Teardown();
        if (!why.empty()) {
          return absl::StrCat("round ", round + 1, ", ", kKindNames[k], ": ",
                              why);
        }
      }
    }
    ran_ = true;
    return "";
  }

  // Runs argv to the end; its stdout, or nullopt if it failed.
  std::optional<std::string> RunCapture(const std::vector<std::string>& argv) {
    int fd = -1;
    const pid_t pid = SpawnProcess(argv, env_, true, err_log_, &fd);
    if (pid < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return out;
  }

  std::vector<std::string> CandidateArgv(Kind k, const std::string& value) {
    switch (k) {
      case kOurs:
        return {tool_,
                "elect",
                absl::StrCat("--ttl=", absl::ToInt64Milliseconds(ttl_), "ms"),
                absl::StrCat("--value=", value),
                "--key-prefix=redlock-bench:election:",
                name_,
                "--",
                sh_,
                "-c",
                "\"$0\" \"$1\" S \"$2:$$\"; exec sleep 3600",
                stamp_,
                stamp_log_,
                value};
      case kEtcdctl:
        return {etcdctl_, absl::StrCat("--endpoints=", etcd_->endpoints()),
                "elect", name_, value};
      case kEtcd3:
        return {node_,
                etcd3_script_,
                absl::StrCat("--endpoints=", etcd_->endpoints()),
                absl::StrCat("--name=", name_),
                absl::StrCat("--value=", value),
                absl::StrCat("--ttl=", absl::ToInt64Seconds(ttl_))};
    }
    return {};
  }

  std::vector<std::string> ObserverArgv(Kind k) {
    switch (k) {
      case kOurs:
        return {tool_, "elect", "--key-prefix=redlock-bench:election:", name_,
                "--listen"};
      case kEtcdctl:
        return {etcdctl_, absl::StrCat("--endpoints=", etcd_->endpoints()),
                "elect", "--listen", name_};
      case kEtcd3:
        return {node_, etcd3_script_,
                absl::StrCat("--endpoints=", etcd_->endpoints()),
                absl::StrCat("--name=", name_), "--listen"};
    }
    return {};
  }

  Proc* Start(Kind k, bool observer) {
    auto p = std::make_unique<Proc>();
    p->observer = observer;
    std::vector<std::string> argv;
    if (observer) {
      argv = ObserverArgv(k);
    } else {
      p->value = absl::StrCat("c", ++next_value_);
      argv = CandidateArgv(k, p->value);
      // Ours says nothing on stdout with a command; etcdctl's candidate
      // waits silently too.
      p->campaigning = k != kEtcd3;
    }
    const bool capture = observer || k != kOurs;
    p->pid = SpawnProcess(argv, env_, capture, err_log_, &p->out);
    if (p->pid < 0) return nullptr;
    procs_.push_back(std::move(p));
    return procs_.back().get();
  }

  Proc* Find(const std::string& value) {
    for (auto& p : procs_) {
      if (!p->observer && p->value == value) return p.get();
    }
    return nullptr;
  }

  // Reads whatever the children wrote, for up to `wait_ms` (poll), reaps
  // the ones that exited. Every leader seen is appended to seen_.
  void Pump(Kind k, int wait_ms) {
    std::vector<pollfd> fds;
    std::vector<Proc*> owners;
    for (auto& p : procs_) {
      if (p->out < 0) continue;
      fds.push_back({p->out, POLLIN, 0});
      owners.push_back(p.get());
    }
    if (!fds.empty()) {
      poll(fds.data(), fds.size(), wait_ms);
    } else if (wait_ms > 0) {
      SleepNs(int64_t{wait_ms} * 1000000);
    }
    const int64_t now = MonotonicNs();
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Proc* p = owners[i];
      char buf[4096];
      while (true) {
        const ssize_t n = read(p->out, buf, sizeof(buf));
        if (n > 0) {
          p->partial.append(buf, static_cast<size_t>(n));
          continue;
        }
        if (n == 0) {
          close(p->out);
          p->out = -1;
        }
        break;
      }
      size_t nl;
      while ((nl = p->partial.find('\n')) != std::string::npos) {
        const std::string line = p->partial.substr(0, nl);
        p->partial.erase(0, nl + 1);
        Line(k, *p, line, now);
      }
    }
    if (k == kOurs) ReadStamps();
    for (auto& p : procs_) {
      if (p->reaped) continue;
      int status = 0;
      if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
        p->reaped = true;
        p->status = status;
      }
    }
  }

  void Line(Kind k, Proc& p, absl::string_view line, int64_t now) {
    line = absl::StripAsciiWhitespace(line);
    if (p.observer) {
      std::string value;
      if (k == kOurs) {
        const size_t at = line.find(" value=");
        if (at == absl::string_view::npos) return;
        value = std::string(line.substr(at + 7));
      } else if (k == kEtcdctl) {
        // Key line ("NAME/lease"), then the value line.
        if (absl::StrContains(line, "/")) return;
        value = std::string(line);
      } else {
        if (!absl::ConsumePrefix(&line, "leader ")) return;
        value = std::string(line);
      }
      seen_.push_back({value, now, true});
      return;
    }
    if (k == kEtcd3 && line == "campaigning") {
      p.campaigning = true;
      return;
    }
    if (k == kEtcd3 && !absl::StartsWith(line, "elected ")) return;
    if (p.elected) return;  // etcdctl's second line, the value.
    p.elected = true;
    p.campaigning = true;
    p.elected_ns = now;
    seen_.push_back({p.value, now, false});
  }

  // Ours: "S cN:PID NS" lines of the commands.
  void ReadStamps() {
    std::ifstream in(stamp_log_);
    if (!in) return;
    in.seekg(stamp_offset_);
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // A line still being written: next time.
      stamp_offset_ += static_cast<std::streamoff>(line.size() + 1);
      std::vector<std::string> parts = absl::StrSplit(line, ' ');
      int64_t ns = 0;
      if (parts.size() != 3 || parts[0] != "S" ||
          !absl::SimpleAtoi(parts[2], &ns)) {
        continue;
      }
      std::pair<std::string, std::string> id =
          absl::StrSplit(parts[1], absl::MaxSplits(':', 1));
      Proc* p = Find(id.first);
      if (p == nullptr || p->elected) continue;
      int pid = -1;
      if (absl::SimpleAtoi(id.second, &pid)) p->command = pid;
      p->elected = true;
      p->elected_ns = ns;
      seen_.push_back({p->value, ns, false});
    }
  }

  // Pumps until a candidate other than `not_value` was seen elected at or
  // after `since_ns`, or `deadline_ns` passed.
  std::optional<Seen> WaitLeader(Kind k, const std::string& not_value,
                                 int64_t since_ns, int64_t deadline_ns,
                                 size_t from) {
    while (true) {
      for (size_t i = from; i < seen_.size(); ++i) {
        const Seen& s = seen_[i];
        if (!s.observed && s.value != not_value && s.ns >= since_ns) return s;
      }
      if (MonotonicNs() > deadline_ns) return std::nullopt;
      Pump(k, 1);
    }
  }

  // Pumps until the observer named `value`, for up to `deadline_ns`.
  std::optional<Seen> WaitObserved(Kind k, const std::string& value,
                                   int64_t deadline_ns, size_t from) {
    while (true) {
      for (size_t i = from; i < seen_.size(); ++i) {
        if (seen_[i].observed && seen_[i].value == value) return seen_[i];
      }
      if (MonotonicNs() > deadline_ns) return std::nullopt;
      Pump(k, 1);
    }
  }

  // Waits until every live candidate campaigns (etcdctl: its key is there;
  // ours: no sign, the settle pause covers it), then settles.
  std::string WaitCampaigning(Kind k) {
    const int64_t deadline = MonotonicNs() + int64_t{30} * 1000000000;
    while (true) {
      Pump(k, 5);
      bool all = true;
      int live = 0;
      for (auto& p : procs_) {
        if (p->observer || p->reaped) continue;
        ++live;
        all = all && p->campaigning;
      }
      if (all && k == kEtcdctl) {
        // etcdctl 3.4 has no --count-only: one key per line.
        const std::optional<std::string> keys = RunCapture(
            {etcdctl_, absl::StrCat("--endpoints=", etcd_->endpoints()), "get",
             name_ + "/", "--prefix", "--keys-only"});
        int count = 0;
        if (keys.has_value()) {
          for (absl::string_view l : absl::StrSplit(*keys, '\n')) {
            if (absl::StartsWith(l, name_ + "/")) ++count;
          }
        }
        all = count == live;
      }
      if (all) break;
      if (MonotonicNs() > deadline)
        return "candidates not campaigning after 30 s";
    }
    const int64_t until = MonotonicNs() + absl::ToInt64Nanoseconds(settle_);
    while (MonotonicNs() < until) Pump(k, 5);
    for (auto& p : procs_) {
      if (p->reaped && !p->observer && !p->elected) {
        return absl::StrCat("candidate ", p->value, " exited (status ",
                            p->status, "; see ", err_log_, ")");
      }
    }
    return "";
  }

  // SIGKILLs p's group (and, for ours, its command's).
  void Kill(Proc& p) {
    if (!p.reaped) kill(-p.pid, SIGKILL);
    if (IsOurCommand(p.command)) {
      if (getpgid(p.command) == p.command) kill(-p.command, SIGKILL);
      kill(p.command, SIGKILL);
    }
  }

  // One round of tool k. Returns why it failed, or "".
  std::string RunRound(Kind k, int round) {
    name_ = absl::StrCat("election-", getpid(), "-", k, "-", round);
    seen_.clear();
    stamp_offset_ = 0;
    { std::ofstream truncate(stamp_log_, std::ios::trunc); }
    const bool observe = absl::GetFlag(FLAGS_election_observers);
    if (observe && Start(k, true) == nullptr)
      return "cannot start the observer";
    Proc* first = Start(k, false);
    if (first == nullptr) return "cannot start a candidate";
    const int64_t start_deadline = MonotonicNs() + int64_t{30} * 1000000000;
    std::optional<Seen> leader = WaitLeader(k, "", 0, start_deadline, 0);
    if (!leader)
      return absl::StrCat("no first leader in 30 s (see ", err_log_, ")");
    for (int i = 1; i < kCandidates; ++i) {
      if (Start(k, false) == nullptr) return "cannot start a candidate";
    }
    if (std::string why = WaitCampaigning(k); !why.empty()) return why;

    const int64_t s = 1000000000;
    for (int r = 0; r < resigns_ + 1; ++r) {
      const Event e = r < resigns_ ? kResign : kFailover;
      if (e == kFailover && k == kEtcdctl &&
          !absl::GetFlag(FLAGS_election_etcdctl_failover)) {
        break;
      }
      if (e == kFailover) {
        // Kill at a random phase of the keep-alive: both tools extend every
        // TTL/3, ours from its election on, etcd's from its campaign's
        // start, so without this ours would always die the same time
        // (the settle) after its lease was set.
        const int64_t period =
            (k == kEtcdctl ? 60 * s : absl::ToInt64Nanoseconds(ttl_)) / 3;
        const int64_t until =
            MonotonicNs() +
            std::uniform_int_distribution<int64_t>(0, period)(rng_);
        while (MonotonicNs() < until) Pump(k, 5);
      }
      Proc* p = Find(leader->value);
      if (p == nullptr) return "lost track of the leader";
      const size_t from = seen_.size();
      const int64_t t0 = MonotonicNs();
      if (e == kFailover) {
        Kill(*p);
      } else if (k == kOurs) {
        if (!IsOurCommand(p->command)) {
          return "the leader's command (from its stamp) is not running";
        }
        kill(p->command, SIGTERM);
      } else {
        kill(p->pid, SIGTERM);
      }
      const int64_t budget =
          e == kResign
              ? 15 * s
              : (k == kEtcdctl ? 75 * s
                               : absl::ToInt64Nanoseconds(ttl_) + 15 * s);
      std::optional<Seen> next = WaitLeader(k, p->value, t0, t0 + budget, from);
      if (!next) {
        return absl::StrCat(
            "no new leader ",
            e == kResign ? "after a resignation" : "after a kill", " within ",
            budget / s, " s (see ", err_log_, ")");
      }
      const double us = (next->ns - t0) / 1e3;
      samples_[k].time[e].push_back(us);
      samples_[k].by_round[e][round].push_back(us);
      if (observe) {
        std::optional<Seen> obs =
            WaitObserved(k, next->value, MonotonicNs() + 10 * s, from);
        if (obs)
          samples_[k].observer_lag[e].push_back((obs->ns - next->ns) / 1e3);
      }
      Log(absl::StrFormat("election: round %d %s %s: %s ms", round + 1,
                          kKindNames[k], kEventNames[e], Ms(us)));
      leader = next;
      if (e == kResign) {
        // The resigned one should exit by itself; a fresh candidate takes
        // its place.
        const int64_t until = MonotonicNs() + 10 * s;
        while (!p->reaped && MonotonicNs() < until) Pump(k, 5);
        if (!p->reaped) return "a resigned candidate did not exit within 10 s";
        if (Start(k, false) == nullptr) return "cannot start a candidate";
        if (std::string why = WaitCampaigning(k); !why.empty()) return why;
      }
    }
    return "";
  }

  // Stops every process of the round: SIGTERM (a candidate resigns, an
  // observer stops), then SIGKILL after 5 s; reaps them all.
  void Teardown() {
    if (procs_.empty()) return;
    for (auto& p : procs_) {
      if (!p->reaped) kill(-p->pid, SIGTERM);
      if (IsOurCommand(p->command)) kill(p->command, SIGTERM);
    }
    const int64_t until = MonotonicNs() + int64_t{5} * 1000000000;
    while (MonotonicNs() < until) {
      bool all = true;
      for (auto& p : procs_) {
        if (p->reaped) continue;
        int status = 0;
        if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
          p->reaped = true;
        } else {
          all = false;
        }
      }
      if (all) break;
      SleepNs(5000000);
    }
    for (auto& p : procs_) {
      Kill(*p);
      if (!p->reaped) {
        waitpid(p->pid, nullptr, 0);
        p->reaped = true;
      }
      if (p->out >= 0) close(p->out);
    }
    procs_.clear();
  }

  const int rounds_;
  const int resigns_;
  const absl::Duration ttl_;
  const absl::Duration settle_;
  std::string stamp_, tool_, sh_, etcdctl_, node_, etcd3_script_;
  std::string tmp_, err_log_, stamp_log_;
  std::vector<std::string> env_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::string etcd_note_ = "phase did not run";
  std::string load_before_, load_after_;

  // The round in progress.
  std::string name_;
  std::vector<std::unique_ptr<Proc>> procs_;
  std::vector<Seen> seen_;
  std::streamoff stamp_offset_ = 0;
  int next_value_ = 0;
  std::mt19937_64 rng_{std::random_device{}()};

  bool ran_ = false;
  std::string skipped_;
  bool ran_kind_[kKinds] = {false, false, false};
  std::string not_run_[kKinds];
  std::string commands_[kKinds];
  Samples samples_[kKinds];
};

const RegisterPhase kRegistered(49, "election",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<ElectionPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
