// Copyright 2026 The redlock Authors.
//
// redlock-torture: a Jepsen-style torture run of the library. K client
// processes (this binary in --client mode) contend for R resources on N
// redis-server masters, each through its own FaultProxy, while a nemesis on
// a seeded schedule kills and restarts masters, stops them, delays,
// blackholes and resets their connections and pauses client processes. Each
// client records every critical section with plain write(2) (history.h); a
// checker that reads only those files reports mutual-exclusion, fencing,
// liveness and leftover-key violations. See docs/safety-under-faults.md.
//
//   redlock-torture --out=/tmp/t --duration=60 --seed=1
//   redlock-torture --check=/tmp/t/history
//   redlock-torture --majority --nemesis=kill --restart_guard=off
//       --expect_violations    (exits 0 iff mutual exclusion was violated)
//   redlock-torture --primitive=election --resources=1 --out=/tmp/e
//
// With --primitive=election the clients campaign in elections e0.. instead
// (redlock/election.h): a leader writes the fenced resource with its epoch,
// may proclaim a new value, and resigns; one iteration in four observes an
// election instead, recording every leader it is told of. A leadership is
// recorded as a fenced lock of the election's name; the checker also
// judges the observers' views (history.h, CheckLeaderViews()).
//
// Every process, server and proxy is on 127.0.0.1 and is stopped by PID.

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "redlock/election.h"
#include "redlock/fencing.h"
#include "redlock/keys.h"
#include "redlock/observer.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/skewed_clock.h"
#include "tools/torture/history.h"

ABSL_FLAG(int, clients, 8, "Client processes.");
ABSL_FLAG(int, resources, 2, "Resources contended for.");
ABSL_FLAG(int, masters, 5, "Redis masters.");
ABSL_FLAG(int, duration, 60, "Run length in seconds.");
ABSL_FLAG(int, quiet, 10,
          "The nemesis stops and heals everything this many seconds before "
          "the end.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the nemesis schedule and the clients.");
ABSL_FLAG(std::string, persistence, "none",
          "Masters' persistence: none, aof (appendfsync always), or mixed "
          "(aof on the even-numbered masters, none on the others).");
ABSL_FLAG(std::string, restart_guard, "on", "Options::restart_guard: on|off.");
ABSL_FLAG(std::string, fencing, "on",
          "Acquire with fencing tokens (AcquireOptions::fencing) and write "
          "the fenced resource: on|off. With it on, the library refuses "
          "(kUnavailable) once a majority restarted empty, so showing the "
          "unsafe configuration's double grants needs it off.");
ABSL_FLAG(std::string, nemesis, "all",
          "Comma-separated fault kinds: kill,stop,latency,blackhole,reset,"
          "pause,clock,clockjump; or all (every kind but clockjump, which "
          "breaks Redlock's clock assumption by design), or none.");
ABSL_FLAG(std::string, clock_masters, "",
          "Comma-separated indices of masters whose wall clock runs at "
          "--clock_speed for the whole run (the clock shim, "
          "tests/support/clock_shim.c).");
ABSL_FLAG(double, clock_speed, 1.5,
          "Rate of the --clock_masters' wall clock: 1.5 = 1.5 seconds per "
          "second.");
ABSL_FLAG(double, drift_factor, 0.01,
          "Options::drift_factor of the clients: the clock rate difference "
          "the lock's validity allows for.");
ABSL_FLAG(bool, majority, false,
          "Master faults hit a majority (the fixed set of masters 0..N/2, so "
          "the others always keep their data) instead of a random minority.");
ABSL_FLAG(std::string, out, "", "Output directory (required for a run).");
ABSL_FLAG(std::string, check, "",
          "Only check the history files in this directory.");
ABSL_FLAG(bool, expect_violations, false,
          "Exit 0 iff mutual-exclusion violations were found (for showing an "
          "unsafe configuration fail).");
ABSL_FLAG(double, svg_from, 0,
          "timeline.svg starts this many seconds into the run.");
ABSL_FLAG(double, svg_to, 0,
          "timeline.svg ends this many seconds into the run (0: at the end).");
ABSL_FLAG(std::string, primitive, "lock",
          "What the clients take: lock (resources r0..), or election "
          "(leaders and observers of elections e0..).");
ABSL_FLAG(int, ttl_ms, 1000, "Lock TTL.");
ABSL_FLAG(int, wait_ms, 2000, "Acquire wait budget.");
ABSL_FLAG(int, work_ms, 300,
          "Work in a critical section: two steps of uniform [work_ms/2, "
          "work_ms] each, a fenced write after each.");
// --client mode (internal).
ABSL_FLAG(bool, client, false, "Internal: run as a client process.");
ABSL_FLAG(int, client_id, 0, "Internal.");
ABSL_FLAG(std::string, client_masters, "", "Internal.");
ABSL_FLAG(int, storage_port, 0, "Internal.");
ABSL_FLAG(std::string, history_file, "", "Internal.");
ABSL_FLAG(std::string, resource_names, "", "Internal.");
ABSL_FLAG(int64_t, deadline_ns, 0, "Internal.");

namespace {

using redlock::testing::FaultProxy;
using redlock::testing::RedisClient;
using redlock::testing::RedisServer;
using redlock::testing::SkewedClock;
using redlock::torture::AppendLine;
using redlock::torture::NowNs;

constexpr int kRetryMaxMs = 60;  // RetryPolicy default max_delay.

void SleepMs(int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void SleepUntilNs(int64_t t) {
  const int64_t d = t - NowNs();
  if (d > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d));
}

redlock::Options ClientOptions(std::vector<std::string> masters, bool guard,
                               int ttl_ms, double drift_factor) {
  redlock::Options o;
  o.drift_factor = drift_factor;
  o.masters = std::move(masters);
  o.request_timeout = absl::Milliseconds(100);
  // A reborn master stays out for max_ttl: keep it as small as the TTL in
  // use allows (docs/failure-behaviour.md).
  o.max_ttl = absl::Milliseconds(std::max(2000, 2 * ttl_ms));
  o.default_ttl = absl::Milliseconds(ttl_ms);
  o.restart_guard = guard;
  return o;
}

// ---------------------------------------------------------------- client

class Storage {
 public:
  explicit Storage(int port) : port_(port) {}
  // EVAL kFencedSetScript: "accepted", "rejected" or "error".
  std::string Fenced(const std::string& res, uint64_t fence,
                     const std::string& value) {
    if (!Ensure()) return "error";
    auto reply = client_->Command(
        redlock::FencedSetArgv("fence:" + res, "data:" + res, fence, value));
    if (!reply.ok() || reply->type != redlock::testing::Reply::Type::kInteger) {
      client_.reset();
      return "error";
    }
    return reply->integer == 1 ? "accepted" : "rejected";
  }
  // INCR: the new value, or -1.
  int64_t Incr(const std::string& res) {
    if (!Ensure()) return -1;
    auto reply = client_->Command({"INCR", "unfenced:" + res});
    if (!reply.ok() || reply->type != redlock::testing::Reply::Type::kInteger) {
      client_.reset();
      return -1;
    }
    return reply->integer;
  }

 private:
  bool Ensure() {
    if (client_ != nullptr) return true;
    auto c = RedisClient::Connect("127.0.0.1", port_, absl::Seconds(1));
    if (!c.ok()) return false;
    client_ = std::move(*c);
    return true;
  }
  int port_;
  std::unique_ptr<RedisClient> client_;
};

// --primitive=election: the PROCLAIM line of a campaign's first value, once
// its lease is won (the value is written then, whether or not the campaign
// goes on to succeed).
class LeaseWatcher final : public redlock::Observer {
 public:
  LeaseWatcher(int fd, int id) : fd_(fd), id_(id) {}
  void Campaigning(const std::string& name, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    name_ = name;
    value_ = value;
  }
  void OnAcquired(const redlock::AcquiredEvent& event) override {
    const int64_t now = NowNs();
    std::lock_guard<std::mutex> lock(mu_);
    if (event.resource != redlock::ElectionResource(name_)) return;
    AppendLine(fd_, absl::StrFormat(
                        "PROCLAIM c=%d res=%s epoch=%d rev=1 value=%s start=%d",
                        id_, name_, event.fence, value_, now));
  }

 private:
  const int fd_;
  const int id_;
  std::mutex mu_;
  std::string name_;   // Guarded by mu_.
  std::string value_;  // Guarded by mu_.
};

// Records a failed acquisition (or campaign) of `res`, started at `start`
// and returned at `ret`, and pauses: an outage fails at once, so a client
// must not spin.
void LogAcquireFailure(int fd, int id, const std::string& res, int64_t start,
                       int64_t ret, const absl::Status& status) {
  AppendLine(fd, absl::StrFormat("ACQFAIL c=%d res=%s start=%d ret=%d code=%s",
                                 id, res, start, ret,
                                 absl::StatusCodeToString(status.code())));
  SleepMs(20);
}

// --primitive=election: campaign, lead (two steps of work, a fenced write
// with the epoch after each, a proclamation after the first now and then),
// resign; or observe for a while.
int RunElectionClient(int id, int fd, redlock::Redlock& client,
                      LeaseWatcher& watcher, Storage& storage,
                      const std::vector<std::string>& elections) {
  const int ttl_ms = absl::GetFlag(FLAGS_ttl_ms);
  const int work_ms = std::max(2, absl::GetFlag(FLAGS_work_ms));
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed) * 7919 + id);
  const int64_t deadline = absl::GetFlag(FLAGS_deadline_ns);
  int64_t seq = 0, campaigns = 0, watches = 0;
  while (NowNs() < deadline) {
    const std::string& name = elections[rng() % elections.size()];
    if (rng() % 4 == 0) {
      const int64_t watch = watches++;
      redlock::ObserveOptions observe;
      observe.poll_every = absl::Milliseconds(std::max(50, ttl_ms / 4));
      observe.on_leader = [fd, id, watch](const redlock::LeaderInfo& info) {
        AppendLine(fd, absl::StrFormat(
                           "VIEW c=%d w=%d res=%s epoch=%d rev=%d value=%s "
                           "t=%d",
                           id, watch, info.name, info.epoch, info.revision,
                           info.value, NowNs()));
      };
      absl::StatusOr<redlock::ObserveHandle> handle =
          client.Observe(name, std::move(observe));
      SleepMs(work_ms + static_cast<int64_t>(rng() % (2 * work_ms + 1)));
      if (handle.ok()) handle->Stop();
      continue;
    }
    const std::string base = absl::StrFormat("c%d-%d", id, campaigns++);
    watcher.Campaigning(name, base + "-r1");
    redlock::CampaignOptions co;
    co.ttl = absl::Milliseconds(ttl_ms);
    co.wait = absl::Milliseconds(absl::GetFlag(FLAGS_wait_ms));
    const int64_t start = NowNs();
    absl::StatusOr<redlock::Leadership> lead =
        client.Campaign(name, base + "-r1", std::move(co));
    const int64_t ret = NowNs();
    if (!lead.ok()) {
      LogAcquireFailure(fd, id, name, start, ret, lead.status());
      continue;
    }
    const int64_t s = seq++;
    auto vu = [&lead] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 lead->lock().valid_until().time_since_epoch())
          .count();
    };
    std::string votes;
    for (const redlock::MasterVote& v : lead->lock().votes()) {
      votes += "gdfp"[static_cast<int>(v.kind)];
    }
    const uint64_t epoch = lead->epoch();
    AppendLine(
        fd, absl::StrFormat("ACQ c=%d s=%d res=%s token=%s fence=%d start=%d "
                            "ret=%d vu=%d votes=%s",
                            id, s, name, lead->lock().token(), epoch, start,
                            ret, vu(), votes));
    AppendLine(fd, absl::StrFormat("WS c=%d s=%d t=%d", id, s, NowNs()));
    int64_t revision = 2;
    for (int step = 0; step < 2; ++step) {
      SleepMs(work_ms / 2 + static_cast<int64_t>(rng() % (work_ms / 2 + 1)));
      // Whether still valid or not (a SIGSTOP may have outlasted the
      // lease): only the epoch can stop a stale leader's write.
      const int64_t send = NowNs();
      const std::string r =
          storage.Fenced(name, epoch, absl::StrCat(id, ":", s));
      AppendLine(fd, absl::StrFormat("FW c=%d s=%d res=%s fence=%d send=%d "
                                     "ans=%d result=%s",
                                     id, s, name, epoch, send, NowNs(), r));
      if (step == 0 && rng() % 2 == 0) {
        const std::string value = absl::StrCat(base, "-r", revision);
        const int64_t sent = NowNs();
        absl::Status proclaimed = client.Proclaim(*lead, value);
        // Refused at once (lost): nothing was sent. Otherwise it may have
        // landed whatever the outcome.
        if (proclaimed.code() != absl::StatusCode::kFailedPrecondition) {
          AppendLine(fd,
                     absl::StrFormat("PROCLAIM c=%d res=%s epoch=%d "
                                     "rev=%d value=%s start=%d",
                                     id, name, epoch, revision, value, sent));
          ++revision;
        }
      }
    }
    AppendLine(fd, absl::StrFormat("WE c=%d s=%d t=%d", id, s, NowNs()));
    AppendLine(fd, absl::StrFormat("VU c=%d s=%d vu=%d", id, s, vu()));
    auto rel = client.Resign(*lead);
    AppendLine(fd, absl::StrFormat("REL c=%d s=%d t=%d result=%s released=%d",
                                   id, s, NowNs(),
                                   !rel.ok()    ? "error"
                                   : rel->freed ? "ok"
                                                : "partial",
                                   rel.ok() ? rel->released : -1));
  }
  return 0;
}

int RunClient() {
  const int id = absl::GetFlag(FLAGS_client_id);
  const int fd = open(absl::GetFlag(FLAGS_history_file).c_str(),
                      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 2;
  const int ttl_ms = absl::GetFlag(FLAGS_ttl_ms);
  const int work_ms = std::max(2, absl::GetFlag(FLAGS_work_ms));
  std::vector<std::string> masters =
      absl::StrSplit(absl::GetFlag(FLAGS_client_masters), ',');
  std::vector<std::string> resources =
      absl::StrSplit(absl::GetFlag(FLAGS_resource_names), ',');
  redlock::Options options =
      ClientOptions(masters, absl::GetFlag(FLAGS_restart_guard) != "off",
                    ttl_ms, absl::GetFlag(FLAGS_drift_factor));
  const bool election = absl::GetFlag(FLAGS_primitive) == "election";
  auto watcher = std::make_shared<LeaseWatcher>(fd, id);
  if (election) options.observer = watcher;
  auto client = redlock::Redlock::Create(std::move(options));
  if (!client.ok()) {
    fprintf(stderr, "client %d: %s\n", id, client.status().ToString().c_str());
    return 2;
  }
  Storage storage(absl::GetFlag(FLAGS_storage_port));
  if (election) {
    const int rc =
        RunElectionClient(id, fd, **client, *watcher, storage, resources);
    client->reset();
    close(fd);
    return rc;
  }
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed) * 7919 + id);
  const int64_t deadline = absl::GetFlag(FLAGS_deadline_ns);
  redlock::AcquireOptions ao;
  ao.ttl = absl::Milliseconds(ttl_ms);
  ao.wait = absl::Milliseconds(absl::GetFlag(FLAGS_wait_ms));
  ao.fencing = absl::GetFlag(FLAGS_fencing) != "off";
  int64_t seq = 0;
  while (NowNs() < deadline) {
    const std::string& res = resources[rng() % resources.size()];
    const int64_t start = NowNs();
    absl::StatusOr<redlock::Lock> lock = (*client)->Acquire(res, ao);
    const int64_t ret = NowNs();
    if (!lock.ok()) {
      LogAcquireFailure(fd, id, res, start, ret, lock.status());
      continue;
    }
    const int64_t s = seq++;
    const int64_t vu = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           lock->valid_until().time_since_epoch())
                           .count();
    const uint64_t fence = lock->fence();
    // How each master voted, one letter per master in order (granted,
    // denied, failed, pending): for reading a violation, not for judging.
    std::string votes;
    for (const redlock::MasterVote& v : lock->votes()) {
      votes += "gdfp"[static_cast<int>(v.kind)];
    }
    AppendLine(
        fd, absl::StrFormat("ACQ c=%d s=%d res=%s token=%s fence=%d start=%d "
                            "ret=%d vu=%d votes=%s",
                            id, s, res, lock->token(), fence, start, ret, vu,
                            votes));
    AppendLine(fd, absl::StrFormat("WS c=%d s=%d t=%d", id, s, NowNs()));
    for (int step = 0; step < 2; ++step) {
      SleepMs(work_ms / 2 + static_cast<int64_t>(rng() % (work_ms / 2 + 1)));
      int64_t send = NowNs();
      int64_t ans = 0;
      if (ao.fencing) {
        std::string r = storage.Fenced(res, fence, absl::StrCat(id, ":", s));
        ans = NowNs();
        AppendLine(
            fd, absl::StrFormat("FW c=%d s=%d res=%s fence=%d send=%d ans=%d "
                                "result=%s",
                                id, s, res, fence, send, ans, r));
      }
      if (step == 0) {
        send = NowNs();
        const int64_t v = storage.Incr(res);
        ans = NowNs();
        AppendLine(fd, absl::StrFormat(
                           "UW c=%d s=%d res=%s send=%d ans=%d result=%s "
                           "value=%d",
                           id, s, res, send, ans, v < 0 ? "error" : "ok", v));
      }
    }
    AppendLine(fd, absl::StrFormat("WE c=%d s=%d t=%d", id, s, NowNs()));
    auto rel = (*client)->Release(*lock);
    AppendLine(fd, absl::StrFormat("REL c=%d s=%d t=%d result=%s released=%d",
                                   id, s, NowNs(),
                                   !rel.ok()    ? "error"
                                   : rel->freed ? "ok"
                                                : "partial",
                                   rel.ok() ? rel->released : -1));
  }
  client->reset();
  close(fd);
  return 0;
}

// ---------------------------------------------------------------- nemesis

struct Episode {
  int64_t at_ms = 0;  // From t0.
  std::string kind;
  std::vector<int> targets;
  int64_t dur_ms = 0;
  int latency_ms = 0;
  int jump_ms = 0;    // clock, clockjump: how far the wall clock jumps
  double rate = 1.0;  // forward, and how fast it runs for dur_ms.
};

std::vector<Episode> MakeSchedule(uint64_t seed,
                                  const std::vector<std::string>& kinds,
                                  int masters, int clients, bool majority,
                                  int64_t heal_ms, int64_t max_ttl_ms,
                                  double drift_factor) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](int64_t lo, int64_t hi) {
    return lo +
           static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  std::vector<Episode> out;
  if (kinds.empty()) return out;
  // Start once the deployment is older than Redis' uptime resolution, so the
  // restart guard can tell a restarted master (docs/failure-behaviour.md).
  int64_t t = 4000;
  while (true) {
    Episode e;
    e.at_ms = t;
    e.kind = kinds[uni(0, kinds.size() - 1)];
    if (e.kind == "pause") {
      const int n = static_cast<int>(uni(1, std::min(2, clients)));
      std::vector<int> all(clients);
      for (int i = 0; i < clients; ++i) all[i] = i;
      std::shuffle(all.begin(), all.end(), rng);
      e.targets.assign(all.begin(), all.begin() + n);
    } else if (majority) {
      for (int i = 0; i <= masters / 2; ++i) e.targets.push_back(i);
    } else {
      const int n = static_cast<int>(uni(1, std::max(1, (masters - 1) / 2)));
      std::vector<int> all(masters);
      for (int i = 0; i < masters; ++i) all[i] = i;
      std::shuffle(all.begin(), all.end(), rng);
      e.targets.assign(all.begin(), all.begin() + n);
    }
    std::sort(e.targets.begin(), e.targets.end());
    int64_t gap = uni(300, 1500);
    if (e.kind == "kill") {
      e.dur_ms = uni(0, 300);   // Down time between SIGKILL and restart.
      gap += max_ttl_ms + 500;  // A reborn master stays out for max_ttl.
    } else if (e.kind == "stop") {
      e.dur_ms = uni(500, 2000);
    } else if (e.kind == "latency") {
      e.dur_ms = uni(1000, 3000);
      e.latency_ms = static_cast<int>(uni(150, 400));
    } else if (e.kind == "blackhole") {
      e.dur_ms = uni(1000, 2500);
    } else if (e.kind == "reset") {
      e.dur_ms = uni(100, 800);
    } else if (e.kind == "clock") {
      // A wall clock that runs fast, but within what drift_factor allows
      // for: a key set for ttl lives ttl/rate, and the lock's validity is
      // at most ttl * (1 - drift_factor), so rate <= 1/(1 - drift_factor).
      // Drawn from the upper half of 80% of that allowance. Safe, also on a
      // majority.
      e.dur_ms = uni(1000, 3000);
      const double allowed = 0.8 * (1 / (1 - drift_factor) - 1);
      e.rate =
          1 + allowed * (0.5 + 0.5 * static_cast<double>(uni(0, 1000)) / 1000);
    } else if (e.kind == "clockjump") {
      // A wall clock that jumps ahead and then races (NTP gone wrong):
      // beyond any drift_factor. Keys expire early on those masters, and a
      // holder whose quorum includes one of them (a split vote makes a
      // bare quorum common) loses the lock without knowing: unsafe even on
      // a minority (docs/safety-under-faults.md).
      e.dur_ms = uni(1000, 3000);
      e.jump_ms = static_cast<int>(uni(200, 3000));
      e.rate = static_cast<double>(uni(2, 4));
    } else {  // pause: longer than the TTL, a GC pause
      e.dur_ms = uni(1200, 2500);
    }
    if (e.at_ms + e.dur_ms + 500 > heal_ms) break;
    out.push_back(e);
    t = e.at_ms + e.dur_ms + gap;
  }
  return out;
}

std::string Targets(const Episode& e) { return absl::StrJoin(e.targets, "+"); }

int Report(const std::string& out_dir, const std::string& history_dir,
           bool expect_violations) {
  absl::StatusOr<redlock::torture::History> h =
      redlock::torture::CheckHistory(history_dir);
  if (!h.ok()) {
    fprintf(stderr, "check: %s\n", h.status().ToString().c_str());
    return 2;
  }
  printf("%s", redlock::torture::FormatSummary(h->summary).c_str());
  absl::Status s = redlock::torture::WriteJson(*h, out_dir + "/history.json");
  if (s.ok()) {
    s = redlock::torture::WriteSvg(*h, out_dir + "/timeline.svg",
                                   absl::GetFlag(FLAGS_svg_from),
                                   absl::GetFlag(FLAGS_svg_to));
  }
  if (!s.ok()) {
    fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  printf("wrote %s/history.json and %s/timeline.svg\n", out_dir.c_str(),
         out_dir.c_str());
  if (expect_violations) {
    const bool ok = h->summary.mutual_exclusion > 0;
    printf("RESULT: %s (expected mutual-exclusion violations, found %lld)\n",
           ok ? "PASS" : "FAIL",
           static_cast<long long>(h->summary.mutual_exclusion));
    return ok ? 0 : 1;
  }
  const bool ok = h->summary.violations() == 0;
  printf("RESULT: %s (%lld violations)\n", ok ? "PASS" : "FAIL",
         static_cast<long long>(h->summary.violations()));
  return ok ? 0 : 1;
}

int RunOrchestrator(const char* argv0) {
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    fprintf(stderr, "--out is required\n");
    return 2;
  }
  const std::string hist = out + "/history";
  mkdir(out.c_str(), 0755);
  if (mkdir(hist.c_str(), 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot create %s\n", hist.c_str());
    return 2;
  }
  // Stale files of an earlier run would be read by the checker.
  for (int i = 0; i < 1000; ++i) {
    unlink(absl::StrFormat("%s/client-%d.log", hist, i).c_str());
  }
  unlink((hist + "/nemesis.log").c_str());

  const int n = absl::GetFlag(FLAGS_masters);
  const int k = absl::GetFlag(FLAGS_clients);
  const int r = absl::GetFlag(FLAGS_resources);
  const int ttl_ms = absl::GetFlag(FLAGS_ttl_ms);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  const bool guard = absl::GetFlag(FLAGS_restart_guard) != "off";
  std::vector<std::string> kinds;
  const std::string nem = absl::GetFlag(FLAGS_nemesis);
  if (nem == "all") {
    kinds = {"kill", "stop", "latency", "blackhole", "reset", "pause", "clock"};
  } else if (nem != "none") {
    kinds = absl::StrSplit(nem, ',', absl::SkipEmpty());
    for (const std::string& x : kinds) {
      if (x != "kill" && x != "stop" && x != "latency" && x != "blackhole" &&
          x != "reset" && x != "pause" && x != "clock" && x != "clockjump") {
        fprintf(stderr, "unknown nemesis kind %s\n", x.c_str());
        return 2;
      }
    }
  }
  const double drift_factor = absl::GetFlag(FLAGS_drift_factor);
  const double clock_speed = absl::GetFlag(FLAGS_clock_speed);
  std::vector<bool> fast_clock(n, false);
  for (absl::string_view x : absl::StrSplit(absl::GetFlag(FLAGS_clock_masters),
                                            ',', absl::SkipEmpty())) {
    int i = -1;
    if (!absl::SimpleAtoi(x, &i) || i < 0 || i >= n) {
      fprintf(stderr, "--clock_masters: %s is not a master index 0..%d\n",
              std::string(x).c_str(), n - 1);
      return 2;
    }
    fast_clock[i] = true;
  }
  if (!(clock_speed > 0 && clock_speed <= 1000)) {
    fprintf(stderr, "--clock_speed must be in (0, 1000]\n");
    return 2;
  }
  {
    redlock::Options check =
        ClientOptions({"redis://127.0.0.1:1"}, guard, ttl_ms, drift_factor);
    absl::Status st = redlock::ValidateOptions(check);
    if (!st.ok()) {
      fprintf(stderr, "%s\n", st.ToString().c_str());
      return 2;
    }
  }
  // Masters get the clock shim when a clock may be skewed: each its own
  // control page, kept across restarts.
  const bool skew =
      std::find(fast_clock.begin(), fast_clock.end(), true) !=
          fast_clock.end() ||
      std::find(kinds.begin(), kinds.end(), "clock") != kinds.end() ||
      std::find(kinds.begin(), kinds.end(), "clockjump") != kinds.end();
  std::vector<std::unique_ptr<SkewedClock>> clocks(n);
  const std::string persistence = absl::GetFlag(FLAGS_persistence);
  if (persistence != "none" && persistence != "aof" && persistence != "mixed") {
    fprintf(stderr, "--persistence must be none, aof or mixed\n");
    return 2;
  }
  RedisServer::Config config;
  auto storage = RedisServer::Start({});
  if (!storage.ok()) {
    fprintf(stderr, "storage: %s\n", storage.status().ToString().c_str());
    return 2;
  }
  std::vector<std::unique_ptr<RedisServer>> servers;
  std::vector<std::unique_ptr<FaultProxy>> proxies;
  std::vector<std::string> uris;
  for (int i = 0; i < n; ++i) {
    RedisServer::Config master_config = config;
    master_config.persistence =
        persistence == "aof" || (persistence == "mixed" && i % 2 == 0)
            ? RedisServer::Persistence::kAofAlways
            : RedisServer::Persistence::kNone;
    if (skew) {
      auto c = SkewedClock::Create(absl::StrFormat("%s/clock-%d", out, i));
      if (!c.ok()) {
        fprintf(stderr, "clock %d: %s\n", i, c.status().ToString().c_str());
        return 2;
      }
      if (fast_clock[i]) (void)(*c)->SetRate(clock_speed);
      master_config.env = (*c)->ServerEnv();
      clocks[i] = std::move(*c);
    }
    auto s = RedisServer::Start(master_config);
    if (!s.ok()) {
      fprintf(stderr, "master %d: %s\n", i, s.status().ToString().c_str());
      return 2;
    }
    FaultProxy::Config pc;
    pc.upstream_port = (*s)->port();
    auto p = FaultProxy::Start(pc);
    if (!p.ok()) {
      fprintf(stderr, "proxy %d: %s\n", i, p.status().ToString().c_str());
      return 2;
    }
    uris.push_back((*p)->Uri());
    servers.push_back(std::move(*s));
    proxies.push_back(std::move(*p));
  }
  const std::string primitive = absl::GetFlag(FLAGS_primitive);
  if (primitive != "lock" && primitive != "election") {
    fprintf(stderr, "--primitive must be lock or election\n");
    return 2;
  }
  const bool election = primitive == "election";
  std::vector<std::string> resources;
  for (int i = 0; i < r; ++i) {
    resources.push_back(absl::StrCat(election ? "e" : "r", i));
  }

  const int nfd = open((hist + "/nemesis.log").c_str(),
                       O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  const int64_t t0 = NowNs();
  const int64_t end = t0 + absl::GetFlag(FLAGS_duration) * 1000000000LL;
  const int64_t heal_ms = std::max<int64_t>(
      0, (absl::GetFlag(FLAGS_duration) - absl::GetFlag(FLAGS_quiet)) * 1000);
  const std::vector<Episode> schedule =
      MakeSchedule(seed, kinds, n, k, absl::GetFlag(FLAGS_majority), heal_ms,
                   absl::ToInt64Milliseconds(
                       ClientOptions({}, guard, ttl_ms, drift_factor).max_ttl),
                   drift_factor);
  AppendLine(
      nfd,
      absl::StrFormat(
          "RUN t0=%d end=%d heal=%d ttl_ms=%d retry_max_ms=%d "
          "clients=%d masters=%d resources=%s seed=%d "
          "persistence=%s guard=%s nemesis=%s majority=%d fencing=%s "
          "drift_factor=%g clock_masters=%s clock_speed=%g primitive=%s",
          t0, end, t0 + heal_ms * 1000000, ttl_ms, kRetryMaxMs, k, n,
          absl::StrJoin(resources, ","), seed, absl::GetFlag(FLAGS_persistence),
          guard ? "on" : "off", nem, absl::GetFlag(FLAGS_majority) ? 1 : 0,
          absl::GetFlag(FLAGS_fencing), drift_factor,
          absl::GetFlag(FLAGS_clock_masters).empty()
              ? "-"
              : absl::GetFlag(FLAGS_clock_masters),
          clock_speed, primitive));
  printf(
      "redlock-torture: %d clients, %d resources, %d masters, %ds, seed "
      "%llu, persistence %s, restart_guard %s, nemesis %s%s: %zu fault "
      "episodes scheduled\n",
      k, r, n, absl::GetFlag(FLAGS_duration),
      static_cast<unsigned long long>(seed),
      absl::GetFlag(FLAGS_persistence).c_str(), guard ? "on" : "off",
      nem.c_str(), absl::GetFlag(FLAGS_majority) ? " (majority)" : "",
      schedule.size());
  fflush(stdout);

  // Clients: fork + exec of this binary.
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string self = len > 0 ? std::string(exe, len) : std::string(argv0);
  std::vector<pid_t> pids;
  for (int i = 0; i < k; ++i) {
    std::vector<std::string> args = {
        self,
        "--client",
        absl::StrCat("--client_id=", i),
        absl::StrCat("--client_masters=", absl::StrJoin(uris, ",")),
        absl::StrCat("--storage_port=", (*storage)->port()),
        absl::StrFormat("--history_file=%s/client-%d.log", hist, i),
        absl::StrCat("--resource_names=", absl::StrJoin(resources, ",")),
        absl::StrCat("--deadline_ns=", end),
        absl::StrCat("--restart_guard=", guard ? "on" : "off"),
        absl::StrCat("--ttl_ms=", ttl_ms),
        absl::StrCat("--fencing=", absl::GetFlag(FLAGS_fencing)),
        absl::StrCat("--work_ms=", absl::GetFlag(FLAGS_work_ms)),
        absl::StrCat("--wait_ms=", absl::GetFlag(FLAGS_wait_ms)),
        absl::StrCat("--drift_factor=", drift_factor),
        absl::StrCat("--primitive=", primitive),
        absl::StrCat("--seed=", seed)};
    const std::string log = absl::StrFormat("%s/client-%d.stderr", out, i);
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int lfd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (lfd >= 0) {
        dup2(lfd, 1);
        dup2(lfd, 2);
      }
      std::vector<char*> cargv;
      for (std::string& a : args) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(self.c_str(), cargv.data());
      _exit(127);
    }
    if (pid > 0) pids.push_back(pid);
  }

  // The nemesis.
  for (const Episode& e : schedule) {
    SleepUntilNs(t0 + e.at_ms * 1000000);
    const int64_t fs = NowNs();
    std::string note;
    if (e.kind == "kill") {
      for (int i : e.targets) (void)servers[i]->Kill();
      SleepMs(e.dur_ms);
      for (int i : e.targets) {
        absl::Status st = servers[i]->Restart();
        if (!st.ok()) note += " restart-error:" + std::to_string(i);
      }
    } else if (e.kind == "stop") {
      for (int i : e.targets) (void)servers[i]->Stop();
      SleepMs(e.dur_ms);
      for (int i : e.targets) (void)servers[i]->Continue();
    } else if (e.kind == "latency") {
      const absl::Duration l = absl::Milliseconds(e.latency_ms);
      for (int i : e.targets) proxies[i]->SetLatency(l, l);
      SleepMs(e.dur_ms);
      for (int i : e.targets) {
        proxies[i]->SetLatency(absl::ZeroDuration(), absl::ZeroDuration());
      }
      note = absl::StrCat(" latency_ms=", e.latency_ms);
    } else if (e.kind == "blackhole" || e.kind == "reset") {
      const FaultProxy::Mode m = e.kind == "reset"
                                     ? FaultProxy::Mode::kReset
                                     : FaultProxy::Mode::kBlackhole;
      for (int i : e.targets) proxies[i]->SetMode(m);
      SleepMs(e.dur_ms);
      for (int i : e.targets) proxies[i]->SetMode(FaultProxy::Mode::kPass);
    } else if (e.kind == "clock" || e.kind == "clockjump") {
      for (int i : e.targets) {
        clocks[i]->Jump(absl::Milliseconds(e.jump_ms));
        (void)clocks[i]->SetRate(e.rate);
      }
      SleepMs(e.dur_ms);
      // The rate comes back; the clock stays ahead, as a stepped clock does.
      for (int i : e.targets) {
        (void)clocks[i]->SetRate(fast_clock[i] ? clock_speed : 1.0);
      }
      note = absl::StrFormat(" jump_ms=%d rate=%g", e.jump_ms, e.rate);
    } else if (e.kind == "pause") {
      for (int i : e.targets) {
        if (i < static_cast<int>(pids.size())) kill(pids[i], SIGSTOP);
      }
      SleepMs(e.dur_ms);
      for (int i : e.targets) {
        if (i < static_cast<int>(pids.size())) kill(pids[i], SIGCONT);
      }
    }
    AppendLine(nfd,
               absl::StrFormat("FAULT kind=%s targets=%s start=%d end=%d%s",
                               e.kind, Targets(e), fs, NowNs(), note));
  }
  SleepUntilNs(t0 + heal_ms * 1000000);
  // Everything is healed here (each episode heals itself).
  AppendLine(nfd, absl::StrFormat("HEAL t=%d", NowNs()));

  // Clients stop at `end` after their current section; give them time.
  SleepUntilNs(end);
  const int64_t give_up = end + 20LL * 1000000000;
  std::vector<bool> done(pids.size(), false);
  int left = static_cast<int>(pids.size());
  while (left > 0 && NowNs() < give_up) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int st = 0;
      if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        done[i] = true;
        --left;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
          fprintf(stderr, "client %zu exited abnormally (status %d)\n", i, st);
        }
      }
    }
    SleepMs(50);
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    if (done[i]) continue;
    fprintf(stderr, "client %zu did not exit; SIGKILL\n", i);
    kill(pids[i], SIGCONT);
    kill(pids[i], SIGKILL);
    waitpid(pids[i], nullptr, 0);
  }

  // Leftovers, read on the masters directly (not through the proxies).
  const redlock::Options key_options;
  int checked = 0;
  for (int i = 0; i < n; ++i) {
    auto c =
        RedisClient::Connect("127.0.0.1", servers[i]->port(), absl::Seconds(2));
    if (!c.ok()) {
      AppendLine(nfd, absl::StrFormat("LEFTOVER master=%d key=? value=%s", i,
                                      "unreachable"));
      continue;
    }
    ++checked;
    for (const std::string& res : resources) {
      // An election's lease (its record stays, by design).
      const std::string key = election
                                  ? redlock::ElectionLockKey(key_options, res)
                                  : redlock::LockKey(key_options, res);
      auto v = (*c)->Get(key);
      if (!v.ok() || v->has_value()) {
        AppendLine(nfd,
                   absl::StrFormat("LEFTOVER master=%d key=%s value=%s", i, key,
                                   v.ok() ? **v : std::string("error")));
      }
    }
  }
  AppendLine(nfd,
             absl::StrFormat("LEFTCHECK masters=%d t=%d", checked, NowNs()));
  close(nfd);
  proxies.clear();
  servers.clear();
  storage->reset();
  return Report(out, hist, absl::GetFlag(FLAGS_expect_violations));
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Jepsen-style torture run of redlock; see docs/safety-under-faults.md");
  absl::ParseCommandLine(argc, argv);
  // A write to a connection the proxy reset must be an error, not death.
  signal(SIGPIPE, SIG_IGN);
  if (absl::GetFlag(FLAGS_client)) return RunClient();
  if (!absl::GetFlag(FLAGS_check).empty()) {
    const std::string dir = absl::GetFlag(FLAGS_check);
    std::string out = absl::GetFlag(FLAGS_out);
    if (out.empty()) out = dir;
    mkdir(out.c_str(), 0755);
    return Report(out, dir, absl::GetFlag(FLAGS_expect_violations));
  }
  return RunOrchestrator(argv[0]);
}
