// Copyright 2026 The redlock Authors.
//
// redlock-e2e-bench: end-to-end latency, throughput, contention and client
// cost of the library on real redis-server processes, each figure next to a
// floor measured in the same run.
//
//   redlock-e2e-bench                       # starts its own 7 masters
//   redlock-e2e-bench --quick               # CI smoke, well under 20s
//   redlock-e2e-bench --masters=redis://127.0.0.1:7001,...  # external masters
//   redlock-e2e-bench --callgrind=async --callgrind_masters=5 --masters=...
//
// Loopback latency on a shared machine moves by several times within
// seconds, so nothing here is compared with another run. Every latency
// configuration runs in blocks interleaved with blocks of the floor (one
// blocking hiredis connection to one master doing SET NX PX + EVALSHA
// compare-and-delete: one lock cycle without a quorum), and the headline of
// each configuration is its ratio to the floor blocks that ran right before
// its own blocks.
//
// Phases (one file each under phases/; see phase.h):
//   latency     floor; raw fan-out (the cheapest correct N-master cycle a
//               hand-written hiredis client could do: pipelined fan-out,
//               poll, quorum for acquire, all for release); AsyncRedlock
//               driven on this thread; blocking Redlock; for N = 1, 3, 5, 7.
//               Also the client CPU per cycle (getrusage).
//   kinds       the uncontended cycle of a semaphore permit (limit 8) and of
//               a reader, each beside the lock's at N=5, async and
//               blocking, in interleaved blocks; the masters' INFO around
//               each block.
//   fault       whole cycles (acquire, then the release awaited as a caller
//               awaits it; also with wait_for_all_masters) with one of five
//               masters behind a FaultProxy adding latency each way,
//               interleaved with the same client kind without a slow master.
//   membership  whole cycles on four masters A,B,C,D under a joint record
//               (A,B,C -> A,B,D, written with the reconfigure script; a
//               client of A,B,C,D) vs a steady A,B,C client and a steady
//               A,B,C,D client, each block after a floor block.
//   throughput  one AsyncRedlock on one loop at N = 5 with 1, 8, 64 locks in
//               flight, interleaved with the masters' own capacity for the
//               same commands measured with redis-benchmark.
//   contention  8 blocking clients (own connections) on one resource.
//   contended_handover
//               a contended lock changing hands: 2, 8, 32 threads, each
//               with a Redlock of its own (redlock-e2e-thread-contenders),
//               beside node-redlock's async workers in one process and a
//               PostgreSQL advisory lock under pgbench (a private server),
//               holds 0 and 1 ms, in interleaved blocks; the gap from a
//               release to the next grant also in raw 5-master round trips.
//   handoff     8 contender processes (redlock-e2e-handoff-contender, each a
//               blocking Redlock) on one resource: hand-off gap, requests
//               and CPU per critical section, waiters only polling vs woken
//               on release, in interleaved blocks.
//   contended_kinds
//               contender processes at N=5: 8 on a lock, 16 on a semaphore
//               of limit 8 (hold 10ms, and again 100ms), 8 on a read-write
//               lock (90% readers), in interleaved blocks: permits in use,
//               hand-offs, requests per grant, readers inside, writer waits
//               against the queueing bound.
//   election    leader election beside etcd's: `redlock elect` with a
//               command, `etcdctl elect` and etcd's election recipe at our
//               TTL (etcd3, Node), three candidates each on a 3-member etcd
//               / 5 masters, in interleaved rounds: the time from a
//               resignation, and from the leader's SIGKILL, to the next
//               leader; an observer's (--listen) lag behind it.
//   fresh       a fresh Redlock's Create() + first Acquire() (+ Release(),
//               destroyed) with every master healthy and with one SIGSTOPped,
//               in interleaved pairs (only with masters it started).
//   tls         five more servers serving plain TCP and TLS on two ports
//               (throw-away certificates made with openssl): N=5 cycles
//               plain vs TLS (p50, client CPU), one connection's set-up
//               plain vs TLS, a fresh client's first acquisition with a
//               master stopped plain vs TLS (only with masters it started).
//
// Output (report.h): a Markdown report on stdout, progress on stderr, every
// figure and the environment as JSON (--out_json), latency distributions for
// gnuplot (--out_cdf). All traffic goes to the masters given (loopback unless
// --allow_remote) or to servers this process starts on 127.0.0.1 and stops.
//
// Layout: main.cc (flags, masters, the order of the run), phase.h (the phase
// interface and registry), phases/*.cc (one per phase), runner.h and
// *_runner.{h,cc} (ways of taking a lock, one cycle at a time),
// sync_client.h (blocking hiredis), stats.h, json.h, environment.h,
// report.h, callgrind.h.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/e2e/callgrind.h"
#include "bench/e2e/common.h"
#include "bench/e2e/environment.h"
#include "bench/e2e/floor_runner.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "redlock/options.h"
#include "tests/support/redis_server.h"

// The flags of one phase are defined in its file under phases/.
ABSL_FLAG(std::string, masters, "",
          "Comma-separated redis:// URIs of external masters (loopback only "
          "unless --allow_remote). Default: start 7 redis-server processes on "
          "free loopback ports and stop them at the end.");
ABSL_FLAG(bool, allow_remote, false,
          "Accept external masters that are not on a loopback address.");
ABSL_FLAG(std::string, out_json, "", "Write every figure as JSON here.");
ABSL_FLAG(std::string, out_cdf, "",
          "Write latency distributions for gnuplot to PREFIX-cycle.tsv and "
          "PREFIX-fault.tsv.");
ABSL_FLAG(bool, quick, false,
          "CI smoke mode: a few hundred cycles per configuration, short "
          "throughput, contention and hand-off runs (overrides the counts "
          "below).");
// The default is every registered phase, in order (read after main starts,
// when every phase file has registered):
// latency,kinds,fault,membership,throughput,contention,contention_peer,
// contended_handover,handoff,contended_kinds,cli_handoff,election,fresh,
// tls,many_locks.
ABSL_FLAG(std::string, phases, redlock::bench::AllPhaseNames(),
          "Which phases to run, comma-separated.");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(10),
          "TTL of the locks in the latency, fault and throughput phases.");
ABSL_FLAG(std::string, redis_benchmark, "redis-benchmark",
          "The redis-benchmark binary (Debian: redis-tools).");
ABSL_FLAG(std::string, callgrind, "",
          "Run only one configuration (floor, raw, async or blocking) for "
          "--callgrind_cycles after a warm-up, then exit. For valgrind "
          "--tool=callgrind: run it with two cycle counts and take the "
          "difference.");
ABSL_FLAG(int, callgrind_masters, 5, "Masters for --callgrind (not floor).");
ABSL_FLAG(int, callgrind_cycles, 200, "Cycles for --callgrind.");

namespace redlock::bench {
namespace {

int Main() {
  Context ctx;
  ctx.quick = absl::GetFlag(FLAGS_quick);
  ctx.ttl = absl::GetFlag(FLAGS_ttl);
  ctx.redis_benchmark = absl::GetFlag(FLAGS_redis_benchmark);
  PhaseList phases;
  std::vector<std::string> names;
  for (const PhaseInfo& info : RegisteredPhases()) {
    phases.push_back(info.make(ctx.quick));
    names.push_back(info.name);
  }
  const std::set<std::string> selected = [] {
    std::set<std::string> p;
    for (absl::string_view s :
         absl::StrSplit(absl::GetFlag(FLAGS_phases), ',', absl::SkipEmpty())) {
      p.insert(std::string(absl::StripAsciiWhitespace(s)));
    }
    return p;
  }();
  const SteadyTime run_start = Now();
  ctx.memory.start_kb = ProcStatusKb("VmRSS");

  // Masters: given, or our own.
  std::unique_ptr<testing::RedisCluster> cluster;
  std::vector<Master>& masters = ctx.masters;
  const bool own = absl::GetFlag(FLAGS_masters).empty();
  if (own) {
    absl::StatusOr<std::unique_ptr<testing::RedisCluster>> started =
        testing::RedisCluster::Start(7);
    if (!started.ok()) {
      Log(absl::StrCat("cannot start masters: ", started.status().ToString()));
      return 1;
    }
    cluster = *std::move(started);
    ctx.cluster = cluster.get();
    for (const std::string& uri : cluster->Uris()) {
      masters.push_back({uri, *ParseMasterUri(uri)});
    }
    Log(absl::StrCat("started 7 masters: ",
                     absl::StrJoin(cluster->Uris(), ",")));
  } else {
    absl::StatusOr<std::vector<Master>> parsed =
        ParseMasters(absl::GetFlag(FLAGS_masters));
    if (!parsed.ok()) {
      Log(parsed.status().ToString());
      return 2;
    }
    masters = *std::move(parsed);
  }
  if (absl::Status s = CheckMasters(masters, absl::GetFlag(FLAGS_allow_remote));
      !s.ok()) {
    Log(s.ToString());
    return 2;
  }
  if (const std::string which = absl::GetFlag(FLAGS_callgrind);
      !which.empty()) {
    const int n = std::min<int>(absl::GetFlag(FLAGS_callgrind_masters),
                                static_cast<int>(masters.size()));
    return RunCallgrind(masters, which, n,
                        absl::GetFlag(FLAGS_callgrind_cycles), ctx.ttl);
  }

  RunSummary run;
  run.env = CollectEnvironment(masters, own, ctx.redis_benchmark);

  // The floor: the latency phase runs a floor block before each of its own.
  std::unique_ptr<FloorRunner> floor;
  {
    absl::StatusOr<std::unique_ptr<FloorRunner>> f =
        FloorRunner::Create(masters[0].address, ctx.ttl);
    if (!f.ok()) {
      Log(absl::StrCat("floor: ", f.status().ToString()));
      return 1;
    }
    floor = *std::move(f);
    if (absl::Status s = WarmUp(*floor, 50, absl::Seconds(10)); !s.ok()) {
      Log(absl::StrCat("floor: ", s.ToString()));
      return 1;
    }
  }
  ctx.floor = floor.get();
  ctx.memory.with_floor_kb = ProcStatusKb("VmRSS");
  // The latency phase measures again once its clients are connected.
  ctx.memory.with_latency_clients_kb = ProcStatusKb("VmRSS");

  for (size_t i = 0; i < phases.size(); ++i) {
    if (!selected.count(names[i])) continue;
    if (absl::Status s = phases[i]->Run(ctx); !s.ok()) {
      Log(std::string(s.message()));
      return 1;
    }
  }

  ctx.memory.end_kb = ProcStatusKb("VmRSS");
  ctx.memory.peak_kb = ProcStatusKb("VmHWM");
  run.wall_s = SecondsBetween(run_start, Now());

  const std::vector<Target> targets = CollectTargets(phases);
  const std::string md = MarkdownReport(run, ctx, phases, targets);
  std::fputs(md.c_str(), stdout);
  std::fflush(stdout);

  if (const std::string path = absl::GetFlag(FLAGS_out_json); !path.empty()) {
    std::ofstream out(path);
    out << Dump(ResultsJson(run, ctx, phases, targets)) << "\n";
    if (!out) Log(absl::StrCat("cannot write ", path));
  }
  if (const std::string prefix = absl::GetFlag(FLAGS_out_cdf);
      !prefix.empty()) {
    WriteCdfFiles(prefix, phases);
  }
  Log(absl::StrFormat("done in %.1f s", SecondsBetween(run_start, Now())));
  return 0;
}

}  // namespace
}  // namespace redlock::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return redlock::bench::Main();
}
