// Copyright 2026 The redlock Authors.
//
// A contended lock changing hands (issue 51: "about one round trip; >= 2,000
// grants/s with 8 contenders on 5 masters"). For each contender count
// (--handover_contenders) and hold (--handover_holds), three kinds loop
// acquire → hold → release on one lock with no pause, in interleaved blocks
// of --handover_block (which kind goes first rotates by round), in the same
// run:
//
//   ours (threads)   redlock-e2e-thread-contenders: one process, a blocking
//                    Redlock of its own per thread, library defaults (no
//                    RetryPolicy field set), TTL 10 s, wait 60 s.
//   node-redlock     bench/peers/node-redlock/threads.js: one node process,
//                    a Redlock and ioredis clients of its own per async
//                    worker, retryDelay 10 ± retryJitter 5 ms (as issue 51
//                    measured it), driftFactor 0.01, retryCount for 60 s.
//   pg advisory lock pgbench on a private PostgreSQL server
//                    (postgres_server.h): pg_advisory_lock(1), \sleep,
//                    pg_advisory_unlock(1); one server, one lock manager, no
//                    quorum: a floor for the throughput of a lock service,
//                    not a peer.
//
// The PostgreSQL server is started here rather than by scripts/bench.sh so
// that `redlock-e2e-bench --phases=contended_handover` is the whole
// experiment on its own, its blocks interleave with the others in the same
// rounds, and its lifetime is this phase's (a RAII owner stops it on every
// way out, also when a block failed).
//
// Before each block, a raw floor: 200 round trips of a PING to each of the
// 5 masters written together and every reply read back (ping_fanout.h).
// Its median over the phase is the unit the "release → next grant" gap is
// also given in: a hand-over that takes one round trip from the release to
// the next grant is 1 floor (the release's own trip is before the release
// returns, so the gap from its return is about 1 floor when the next
// holder's grant is the reply to a request made before the release).
//
// Without node or --node_redlock_dir (scripts/bench.sh installs one) the
// node rows are "not run"; without PostgreSQL's initdb, pg_ctl, postgres and
// pgbench the pg rows are; ours always runs. Reports results.json's
// "contended_handover".

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "bench/e2e/child_processes.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/node_redlock_peer.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/ping_fanout.h"
#include "bench/e2e/postgres_server.h"
#include "bench/e2e/report.h"
#include "bench/e2e/stats.h"

ABSL_FLAG(std::string, handover_contenders, "2,8,32",
          "Contended-handover phase: contender counts, comma-separated "
          "(--quick: 8, and --handover_holds 0).");
ABSL_FLAG(std::string, handover_holds, "0,1ms",
          "Contended-handover phase: how long each grant is held, "
          "comma-separated durations (0: released at once).");
ABSL_FLAG(absl::Duration, handover_block, absl::Seconds(3),
          "Contended-handover phase: how long new acquisitions start in each "
          "block (pgbench: rounded up to whole seconds).");
ABSL_FLAG(int, handover_rounds, 2,
          "Contended-handover phase: rounds of one block of each kind per "
          "contender count and hold (which kind goes first rotates).");
ABSL_FLAG(absl::Duration, handover_ttl, absl::Seconds(10),
          "Contended-handover phase: lock TTL (ours and node-redlock).");
ABSL_FLAG(absl::Duration, handover_wait, absl::Seconds(60),
          "Contended-handover phase: each acquisition's wait budget (ours: "
          "Acquire()'s wait; node-redlock: retryCount = wait / retryDelay).");
ABSL_FLAG(std::string, handover_thread_binary, "",
          "Contended-handover phase: our contenders' binary. Default: "
          "redlock-e2e-thread-contenders next to this binary.");
ABSL_FLAG(bool, handover_postgres, true,
          "Contended-handover phase: run the PostgreSQL advisory-lock floor "
          "(when its binaries are there).");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
constexpr int kFloorSamplesPerBlock = 200;
// node-redlock as issue 51 measured it: retries after 10 ± 5 ms.
constexpr int kNodeRetryDelayMs = 10;
constexpr int kNodeRetryJitterMs = 5;
constexpr double kNodeDriftFactor = 0.01;
constexpr absl::string_view kResource = "contended-handover";

enum Kind { kOurs = 0, kNode = 1, kPostgres = 2 };
constexpr int kKinds = 3;
constexpr const char* kKindNames[] = {"ours (threads)", "node-redlock",
                                      "pg advisory lock"};

// One contender count and hold.
struct Config {
  int contenders = 0;
  absl::Duration hold;
};

// What the blocks of one kind and config measured, or one block's. pgbench
// gives only the count and its own CPU: `detailed` is false for it.
struct Figures {
  int blocks = 0;
  bool detailed = true;
  int64_t grants = 0;
  double duration_s = 0;
  double cpu_s = 0;  // The contenders' process (pgbench: pgbench's).
  std::vector<double> wait_us;
  std::vector<double> gap_us;
  Unfairness unfairness;
  int64_t attempts = 0;
  int64_t handed_over = -1;  // -1: the kind has no hand-over.
  int64_t overlaps = 0;
  int64_t failed_acquisitions = 0;
  int64_t failed_releases = 0;
  std::string last_error;

  void Add(const Figures& b) {
    detailed = b.detailed;
    blocks += b.blocks;
    grants += b.grants;
    duration_s += b.duration_s;
    cpu_s += b.cpu_s;
    wait_us.insert(wait_us.end(), b.wait_us.begin(), b.wait_us.end());
    gap_us.insert(gap_us.end(), b.gap_us.begin(), b.gap_us.end());
    unfairness.Add(b.unfairness);
    attempts += b.attempts;
    if (b.handed_over >= 0)
      handed_over = std::max<int64_t>(handed_over, 0) + b.handed_over;
    overlaps += b.overlaps;
    failed_acquisitions += b.failed_acquisitions;
    failed_releases += b.failed_releases;
    if (!b.last_error.empty()) last_error = b.last_error;
  }
  double PerGrant(double x) const { return grants > 0 ? x / grants : 0; }
  double GrantsPerS() const { return Ratio(grants, duration_s); }
  double CpuUsPerGrant() const { return PerGrant(cpu_s * 1e6); }
};

struct Block {
  Kind kind = kOurs;
  int config = 0;
  int round = 0;
  double floor_us = 0;  // Median of the raw floor right before it.
  Figures figures;
};

// "/proc/loadavg"'s first three fields, or "unknown".
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

std::string Ms(double us) { return absl::StrFormat("%.2f", us / 1000); }

// Typed reads of the contenders' JSON that never throw: the wrong type or a
// missing key is the fallback.
int64_t IntField(const Json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : fallback;
}
double DoubleField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}
std::vector<double> Doubles(const Json& j, const char* key) {
  std::vector<double> v;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return v;
  for (const Json& x : *it) {
    if (x.is_number()) v.push_back(x.get<double>());
  }
  return v;
}

// The figures of one block from the JSON line a contender process wrote
// (thread_contenders_main.cc describes it; threads.js writes the same).
absl::StatusOr<Figures> ParseContenders(absl::string_view text) {
  const Json j = Json::parse(text.begin(), text.end(), nullptr,
                             /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InternalError(
        absl::StrCat("contenders wrote no JSON object: ", text.substr(0, 200)));
  }
  Figures f;
  f.blocks = 1;
  f.grants = IntField(j, "grants", 0);
  f.duration_s = DoubleField(j, "duration_s");
  f.cpu_s = DoubleField(j, "cpu_s");
  f.wait_us = Doubles(j, "waits_us");
  f.gap_us = Doubles(j, "gaps_us");
  f.attempts = IntField(j, "attempts", 0);
  f.handed_over = IntField(j, "handed_over", -1);
  f.overlaps = IntField(j, "overlaps", 0);
  f.failed_acquisitions = IntField(j, "failed_acquisitions", 0);
  f.failed_releases = IntField(j, "failed_releases", 0);
  if (auto e = j.find("last_error"); e != j.end() && e->is_string()) {
    f.last_error = e->get<std::string>();
  }
  std::vector<int64_t> per;
  for (double n : Doubles(j, "per_contender")) {
    per.push_back(static_cast<int64_t>(n));
  }
  if (per.empty()) return absl::InternalError("no per_contender counts");
  f.unfairness.AddBlock(per);
  return f;
}

// Parses "2,8,32" and "0,1ms".
absl::StatusOr<std::vector<Config>> ParseConfigs(const std::string& counts,
                                                 const std::string& holds) {
  std::vector<int> ns;
  for (absl::string_view s : absl::StrSplit(counts, ',', absl::SkipEmpty())) {
    int n = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(s), &n) || n < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--handover_contenders: bad count \"", s, "\""));
    }
    ns.push_back(n);
  }
  std::vector<absl::Duration> hs;
  for (absl::string_view s : absl::StrSplit(holds, ',', absl::SkipEmpty())) {
    s = absl::StripAsciiWhitespace(s);
    absl::Duration d;
    if (s == "0") {
      d = absl::ZeroDuration();
    } else if (!absl::ParseDuration(s, &d) || d < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--handover_holds: bad duration \"", s, "\""));
    }
    hs.push_back(d);
  }
  std::vector<Config> configs;
  for (int n : ns) {
    for (absl::Duration h : hs) configs.push_back({n, h});
  }
  if (configs.empty()) {
    return absl::InvalidArgumentError("no contender count or no hold");
  }
  return configs;
}

std::string HoldName(absl::Duration hold) {
  return hold == absl::ZeroDuration() ? "0" : absl::FormatDuration(hold);
}

// A directory of our own under $TMPDIR (or /tmp), removed with everything in
// it when this goes.
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> Make(absl::string_view name) {
    const char* tmp = getenv("TMPDIR");
    std::string templ = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/",
                                     name, ".XXXXXX");
    if (mkdtemp(templ.data()) == nullptr) {
      return absl::UnavailableError(absl::StrCat("mkdtemp ", templ));
    }
    return std::unique_ptr<TempDir>(new TempDir(templ));
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  const std::string path_;
};

class ContendedHandoverPhase : public Phase {
 public:
  explicit ContendedHandoverPhase(bool quick)
      : quick_(quick),
        rounds_(quick ? 1 : absl::GetFlag(FLAGS_handover_rounds)),
        block_(quick ? absl::Seconds(1) : absl::GetFlag(FLAGS_handover_block)),
        ttl_(absl::GetFlag(FLAGS_handover_ttl)),
        wait_(absl::GetFlag(FLAGS_handover_wait)),
        node_{static_cast<int>(absl::ToInt64Milliseconds(wait_) /
                               kNodeRetryDelayMs),
              kNodeRetryDelayMs, kNodeRetryJitterMs, kNodeDriftFactor} {}

  absl::Status Run(Context& ctx) override {
    load_start_ = LoadAverage();
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 5 masters";
    } else {
      skipped_ = RunAll(ctx);
    }
    load_end_ = LoadAverage();
    if (!skipped_.empty()) {
      Log(absl::StrCat("contended_handover: skipped: ", skipped_));
    }
    if (!node_skipped_.empty()) {
      Log(absl::StrCat("contended_handover: node-redlock not run: ",
                       node_skipped_));
    }
    if (!pg_skipped_.empty()) {
      Log(absl::StrCat("contended_handover: pg advisory lock not run: ",
                       pg_skipped_));
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    // The configurations run (--quick replaces the flags' lists).
    Json configs = Json::array();
    for (const Config& c : configs_) {
      configs.push_back({{"contenders", c.contenders},
                         {"hold_ms", Num(absl::ToDoubleMilliseconds(c.hold))}});
    }
    settings["handover_configs"] = std::move(configs);
    settings["handover_rounds"] = rounds_;
    settings["handover_block_s"] = Num(absl::ToDoubleSeconds(block_));
    settings["handover_ttl_ms"] = Num(absl::ToDoubleMilliseconds(ttl_));
    settings["handover_wait_ms"] = Num(absl::ToDoubleMilliseconds(wait_));
    node_.AddSettings("handover_", settings);
  }

  void AddTargets(std::vector<Target>& targets) const override {
    Target rate = Unmeasured(
        "contended hand-over (issue 51): ≥ 2,000 grants/s, 8 threads with a "
        "client each on one lock, no hold, N=5");
    Target safe = Unmeasured(
        "contended hand-over (ours): no overlapping holders in any block");
    const int i = ConfigIndex(8, absl::ZeroDuration());
    if (ran_ && i >= 0) {
      const Figures& f = figures_[kOurs][i];
      rate = {rate.what,
              absl::StrFormat("%.0f grants/s (gap p50 %s ms, %.2f floors)",
                              f.GrantsPerS(), Ms(Summarize(f.gap_us).p50),
                              Ratio(Summarize(f.gap_us).p50, floor_us_)),
              f.GrantsPerS() >= 2000, true};
    }
    if (ran_) {
      int64_t overlaps = 0;
      for (const Figures& f : figures_[kOurs]) overlaps += f.overlaps;
      safe = {safe.what, absl::StrCat(overlaps, " overlapping grants"),
              overlaps == 0, true};
    }
    targets.push_back(rate);
    targets.push_back(safe);
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) {
      if (!skipped_.empty()) {
        absl::StrAppend(&md, "Contended hand-over skipped: ", skipped_, "\n\n");
      }
      return;
    }
    absl::StrAppend(
        &md, "### A contended lock changing hands (N=", kMasters, ")\n\n",
        "Load average ", load_start_, " at the start, ", load_end_,
        " at the end; raw floor (PING written to all ", kMasters,
        " masters, every reply read; median of ", floor_samples_.size(), ") **",
        Us(floor_us_), " µs**.\n\n",
        "Each kind loops acquire → hold → release on one lock, no pause, "
        "every contender with a client of its own: **ours (threads)**, one "
        "process with a blocking `Redlock` per thread, library defaults, TTL ",
        absl::FormatDuration(ttl_), ", wait ", absl::FormatDuration(wait_),
        "; **node-redlock** 5.0.0-beta.2, one node process with a Redlock "
        "and ioredis clients per async worker, retryDelay ",
        kNodeRetryDelayMs, " ± ", kNodeRetryJitterMs, " ms, driftFactor ",
        kNodeDriftFactor, ", retryCount ", node_.retry_count,
        "; **pg advisory lock**, pgbench (`pg_advisory_lock(1)`, `\\sleep`, "
        "`pg_advisory_unlock(1)`) on one PostgreSQL server with fsync off: "
        "no quorum, a floor, not a peer. ",
        rounds_, " rounds of one ", absl::FormatDuration(block_),
        " block of each kind per row (the first kind rotates by round). "
        "Wait: acquire called → returned with the lock. Gap: a release "
        "returned → the next grant returned, in any contender (negative when "
        "the grant came first), also in raw floors. CPU: the contenders' "
        "process (pg: pgbench's own; the server's is not counted) per grant. "
        "Most / least: grants of one contender, worst block. Handed over: "
        "grants won by a release's hand-off (`AcquiredEvent::handed_over`). "
        "Overlaps: grants while another contender still held the lock.\n\n");
    if (!node_ran_) {
      absl::StrAppend(&md, "node-redlock not run: ", node_skipped_, ".\n\n");
    }
    if (!pg_ran_) {
      absl::StrAppend(&md, "pg advisory lock not run: ", pg_skipped_, ".\n\n");
    }
    absl::StrAppend(
        &md,
        "| kind | contenders | hold | grants/s | wait mean ms | p99 ms | max "
        "ms | gap p50 ms | p99 ms | gap p50 floors | p99 floors | CPU µs per "
        "grant | most / least | handed over | attempts per grant | overlaps "
        "|\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (size_t c = 0; c < configs_.size(); ++c) {
      for (Kind k : {kOurs, kNode, kPostgres}) {
        AppendRow(k, c, md);
      }
    }
    absl::StrAppend(&md, "\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    j["node_ran"] = node_ran_;
    j["node_skipped"] = node_skipped_;
    j["pg_ran"] = pg_ran_;
    j["pg_skipped"] = pg_skipped_;
    j["load_average_start"] = load_start_;
    j["load_average_end"] = load_end_;
    if (ran_) {
      j["masters"] = kMasters;
      j["raw_floor"] = DistJson(Summarize(floor_samples_));
      j["raw_floor_median_us"] = Num(floor_us_);
      Json rows = Json::array();
      for (size_t c = 0; c < configs_.size(); ++c) {
        for (Kind k : {kOurs, kNode, kPostgres}) {
          const Figures& f = figures_[k][c];
          if (f.blocks == 0) continue;
          Json row = FiguresJson(f);
          row["kind"] = kKindNames[k];
          row["contenders"] = configs_[c].contenders;
          row["hold_ms"] = Num(absl::ToDoubleMilliseconds(configs_[c].hold));
          rows.push_back(std::move(row));
        }
      }
      j["rows"] = std::move(rows);
      Json blocks = Json::array();
      for (const Block& b : blocks_) {
        Json k = FiguresJson(b.figures);
        k["kind"] = kKindNames[b.kind];
        k["contenders"] = configs_[b.config].contenders;
        k["hold_ms"] = Num(absl::ToDoubleMilliseconds(configs_[b.config].hold));
        k["round"] = b.round;
        k["raw_floor_median_us"] = Num(b.floor_us);
        blocks.push_back(std::move(k));
      }
      j["blocks"] = std::move(blocks);
    }
    results["contended_handover"] = std::move(j);
  }

 private:
  int ConfigIndex(int contenders, absl::Duration hold) const {
    for (size_t i = 0; i < configs_.size(); ++i) {
      if (configs_[i].contenders == contenders && configs_[i].hold == hold) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // Finds what the node and pg kinds need; says why not in *_skipped_.
  void FindPeers() {
    thread_binary_ = absl::GetFlag(FLAGS_handover_thread_binary);
    if (thread_binary_.empty()) {
      thread_binary_ =
          absl::StrCat(SelfDirectory(), "/redlock-e2e-thread-contenders");
    }
    NodeRedlockPeer node = FindNodeRedlock("threads.js");
    node_binary_ = std::move(node.binary);
    node_script_ = std::move(node.script);
    node_skipped_ = std::move(node.skipped);
    if (!absl::GetFlag(FLAGS_handover_postgres)) {
      pg_skipped_ = "--nohandover_postgres";
      return;
    }
    absl::StatusOr<PostgresBinaries> pg = FindPostgresBinaries();
    if (!pg.ok()) {
      pg_skipped_ = std::string(pg.status().message());
    } else {
      pg_binaries_ = *std::move(pg);
    }
  }

  // Returns why the phase did not run, or "" once ours ran.
  std::string RunAll(Context& ctx) {
    // --quick: the one configuration issue 51 names, as a smoke run.
    absl::StatusOr<std::vector<Config>> configs =
        quick_ ? ParseConfigs("8", "0")
               : ParseConfigs(absl::GetFlag(FLAGS_handover_contenders),
                              absl::GetFlag(FLAGS_handover_holds));
    if (!configs.ok()) return configs.status().ToString();
    configs_ = *std::move(configs);
    for (auto& per_kind : figures_) per_kind.assign(configs_.size(), Figures());
    FindPeers();
    if (access(thread_binary_.c_str(), X_OK) != 0) {
      return absl::StrCat("no contender binary at ", thread_binary_);
    }
    absl::StatusOr<std::unique_ptr<PingFanout>> ping =
        PingFanout::Create(ctx.masters, kMasters);
    if (!ping.ok())
      return absl::StrCat("raw floor: ", ping.status().ToString());
    // Declared before the server, so that the server stops before its
    // directory goes.
    std::unique_ptr<TempDir> pg_dir;
    std::unique_ptr<PostgresServer> pg;
    if (pg_skipped_.empty()) {
      absl::StatusOr<std::unique_ptr<TempDir>> dir =
          TempDir::Make("redlock-bench-pg");
      absl::StatusOr<std::unique_ptr<PostgresServer>> started =
          dir.ok()
              ? PostgresServer::Start(pg_binaries_, (*dir)->path())
              : absl::StatusOr<std::unique_ptr<PostgresServer>>(dir.status());
      if (dir.ok()) pg_dir = *std::move(dir);
      if (started.ok()) {
        pg = *std::move(started);
        Log(absl::StrCat("contended_handover: PostgreSQL on 127.0.0.1:",
                         pg->port()));
      } else {
        pg_skipped_ = started.status().ToString();
      }
    }
    Log(absl::StrCat("contended_handover: ", rounds_, " rounds x ",
                     configs_.size(),
                     " configurations x (ours, node, pg) "
                     "blocks of ",
                     absl::FormatDuration(block_)));
    const std::vector<Kind> kinds = {kOurs, kNode, kPostgres};
    const int n = static_cast<int>(kinds.size());
    for (int round = 0; round < rounds_; ++round) {
      for (size_t c = 0; c < configs_.size(); ++c) {
        for (int i = 0; i < n; ++i) {
          const Kind kind = kinds[(i + round) % n];
          if (kind == kNode && !node_skipped_.empty()) continue;
          if (kind == kPostgres && !pg_skipped_.empty()) continue;
          if (std::string why =
                  RunOneBlock(ctx, **ping, pg.get(), kind, c, round);
              !why.empty()) {
            return why;
          }
        }
      }
    }
    if (floor_samples_.empty()) return "no raw floor sample";
    floor_us_ = Median(floor_samples_);
    ran_ = true;
    node_ran_ = node_skipped_.empty();
    pg_ran_ = pg_skipped_.empty();
    return "";
  }

  // One raw-floor sample set, then one block of `kind`. Returns why the
  // phase must stop ("" to go on); a failing peer only marks that peer not
  // run.
  std::string RunOneBlock(const Context& ctx, PingFanout& ping,
                          const PostgresServer* pg, Kind kind, size_t c,
                          int round) {
    std::vector<double> floor;
    for (int s = 0; s < kFloorSamplesPerBlock; ++s) {
      absl::StatusOr<double> us = ping.RoundTripUs();
      if (!us.ok()) return absl::StrCat("raw floor: ", us.status().ToString());
      floor.push_back(*us);
    }
    floor_samples_.insert(floor_samples_.end(), floor.begin(), floor.end());
    const Config& config = configs_[c];
    Log(absl::StrFormat(
        "contended_handover: round %d, %s, %d contenders, "
        "hold %s",
        round + 1, kKindNames[kind], config.contenders, HoldName(config.hold)));
    absl::StatusOr<Figures> f = kind == kPostgres
                                    ? RunPgbench(*pg, config)
                                    : RunContenders(ctx, kind, config);
    if (!f.ok()) {
      const std::string why =
          absl::StrCat("round ", round + 1, ", ", kKindNames[kind], ", ",
                       config.contenders, " contenders, hold ",
                       HoldName(config.hold), ": ", f.status().ToString());
      if (kind == kNode) {
        node_skipped_ = why;
        return "";
      }
      if (kind == kPostgres) {
        pg_skipped_ = why;
        return "";
      }
      return why;
    }
    figures_[kind][c].Add(*f);
    blocks_.push_back(
        {kind, static_cast<int>(c), round, Median(floor), *std::move(f)});
    return "";
  }

  // One block of ours or node-redlock's: one process, `config.contenders`
  // contenders in it.
  absl::StatusOr<Figures> RunContenders(const Context& ctx, Kind kind,
                                        const Config& config) {
    const Options options = ClientOptions(UrisOf(ctx.masters, kMasters), false);
    std::vector<std::string> args;
    std::string binary;
    if (kind == kOurs) {
      binary = thread_binary_;
      args = {absl::StrCat("--contenders=", config.contenders),
              absl::StrCat("--key_prefix=", options.key_prefix),
              absl::StrCat("--resource=", kResource),
              absl::StrCat("--ttl=", absl::FormatDuration(ttl_)),
              absl::StrCat("--wait=", absl::FormatDuration(wait_)),
              absl::StrCat("--hold=", absl::FormatDuration(config.hold)),
              absl::StrCat("--block=", absl::FormatDuration(block_))};
    } else {
      binary = node_binary_;
      args = {
          node_script_,
          absl::StrCat("--contenders=", config.contenders),
          absl::StrCat("--key=", options.key_prefix, kResource, "-node"),
          absl::StrCat("--ttl_ms=", absl::ToInt64Milliseconds(ttl_)),
          absl::StrCat("--hold_us=", absl::ToInt64Microseconds(config.hold)),
          absl::StrCat("--block_ms=", absl::ToInt64Milliseconds(block_))};
      const std::vector<std::string> retry = node_.Args();
      args.insert(args.end(), retry.begin(), retry.end());
    }
    absl::StatusOr<std::unique_ptr<ChildProcesses>> child =
        ChildProcesses::Start(binary, {args});
    if (!child.ok()) return child.status();
    if (absl::Status s = (*child)->WriteToEach(absl::StrCat(
            "masters ", absl::StrJoin(options.masters, ","), "\n"));
        !s.ok()) {
      return s;
    }
    // Connecting and warming up every client, the block, and the last
    // acquisitions (each at most the wait budget), with room to spare.
    const SteadyTime deadline =
        Now() + absl::ToChronoNanoseconds(absl::Seconds(60) + block_ + wait_);
    absl::StatusOr<std::vector<std::string>> out =
        (*child)->ReadUntilLine("done", deadline);
    if (!out.ok()) return out.status();
    if (absl::Status s = (*child)->Finish(Now() + std::chrono::seconds(15));
        !s.ok()) {
      return s;
    }
    return ParseContenders(out->front());
  }

  absl::StatusOr<Figures> RunPgbench(const PostgresServer& pg,
                                     const Config& config) {
    absl::StatusOr<PgbenchResult> r =
        pg.RunPgbench(config.contenders, block_, config.hold);
    if (!r.ok()) return r.status();
    Figures f;
    f.blocks = 1;
    f.detailed = false;
    f.grants = r->transactions;
    // pgbench's rate leaves its connecting out; the block's span is the one
    // that gives that rate with the count.
    f.duration_s = r->tps > 0 ? r->transactions / r->tps : 0;
    f.cpu_s = r->cpu_s;
    return f;
  }

  void AppendRow(Kind k, size_t c, std::string& md) const {
    const Config& config = configs_[c];
    const Figures& f = figures_[k][c];
    absl::StrAppend(&md, "| ", kKindNames[k], " | ", config.contenders, " | ",
                    HoldName(config.hold), " | ");
    const std::string& skipped = k == kNode       ? node_skipped_
                                 : k == kPostgres ? pg_skipped_
                                                  : skipped_;
    if (f.blocks == 0 || (k != kOurs && !skipped.empty())) {
      // The 12 columns after grants/s stay empty.
      absl::StrAppend(&md, "not run |");
      for (int i = 0; i < 12; ++i) absl::StrAppend(&md, " |");
      absl::StrAppend(&md, "\n");
      return;
    }
    absl::StrAppend(&md, absl::StrFormat("%.0f", f.GrantsPerS()), " | ");
    if (!f.detailed) {
      absl::StrAppend(&md, "— | — | — | — | — | — | — | ",
                      Us(f.CpuUsPerGrant()), " | — | — | — | — |\n");
      return;
    }
    const Dist w = Summarize(f.wait_us);
    const Dist g = Summarize(f.gap_us);
    absl::StrAppend(
        &md, Ms(w.mean), " | ", Ms(w.p99), " | ", Ms(w.max), " | ", Ms(g.p50),
        " | ", Ms(g.p99), " | ",
        absl::StrFormat("%.2f", Ratio(g.p50, floor_us_)), " | ",
        absl::StrFormat("%.2f", Ratio(g.p99, floor_us_)), " | ",
        Us(f.CpuUsPerGrant()), " | ",
        absl::StrFormat("%.2f× (%d / %d)", f.unfairness.Worst(),
                        f.unfairness.most, f.unfairness.least),
        " | ",
        f.handed_over < 0
            ? std::string("—")
            : absl::StrFormat("%.0f%%", 100 * f.PerGrant(f.handed_over)),
        " | ", absl::StrFormat("%.2f", f.PerGrant(f.attempts)), " | ",
        f.overlaps, " |\n");
  }

  Json FiguresJson(const Figures& f) const {
    Json k = Json::object();
    k["blocks"] = f.blocks;
    k["grants"] = f.grants;
    k["duration_s"] = Num(f.duration_s);
    k["grants_per_s"] = Num(f.GrantsPerS());
    k["cpu_us_per_grant"] = Num(f.CpuUsPerGrant());
    if (!f.detailed) return k;
    const Dist g = Summarize(f.gap_us);
    k["acquire_wait"] = DistJson(Summarize(f.wait_us));
    k["release_to_next_grant"] = DistJson(g);
    k["gap_p50_floors"] = Num(Ratio(g.p50, floor_us_));
    k["gap_p99_floors"] = Num(Ratio(g.p99, floor_us_));
    k["unfairness"] = Nums(f.unfairness.ratios);
    k["worst_most"] = f.unfairness.most;
    k["worst_least"] = f.unfairness.least;
    k["attempts_per_grant"] = Num(f.PerGrant(f.attempts));
    k["handed_over_share"] =
        f.handed_over < 0 ? Json(nullptr) : Num(f.PerGrant(f.handed_over));
    k["overlapping_holders"] = f.overlaps;
    k["failed_acquisitions"] = f.failed_acquisitions;
    k["failed_releases"] = f.failed_releases;
    k["last_error"] = f.last_error;
    return k;
  }

  const bool quick_;
  const int rounds_;
  const absl::Duration block_;
  const absl::Duration ttl_;
  const absl::Duration wait_;
  const NodeRedlockSettings node_;
  std::vector<Config> configs_;
  std::string thread_binary_;
  std::string node_binary_;
  std::string node_script_;
  PostgresBinaries pg_binaries_;
  bool ran_ = false;
  bool node_ran_ = false;
  bool pg_ran_ = false;
  std::string skipped_;
  std::string node_skipped_;
  std::string pg_skipped_;
  std::string load_start_;
  std::string load_end_;
  std::vector<double> floor_samples_;
  double floor_us_ = 0;
  std::vector<Figures> figures_[kKinds];  // [kind][config].
  std::vector<Block> blocks_;
};

const RegisterPhase kRegistered(
    43, "contended_handover", [](bool quick) -> std::unique_ptr<Phase> {
      return std::make_unique<ContendedHandoverPhase>(quick);
    });

}  // namespace
}  // namespace redlock::bench
