// Copyright 2026 The redlock Authors.
//
// A phase is one experiment of the harness (latency, fault, throughput,
// contention): it runs, then adds its settings, figures, Markdown section,
// targets and latency distributions to the report. Each phase lives in one
// file under phases/ and registers itself there:
//
//   const RegisterPhase kRegistered(/*order=*/50, "name",
//                                   [](bool quick) -> std::unique_ptr<Phase> {
//                                     return std::make_unique<MyPhase>(quick);
//                                   });
//
// CMake builds every phases/*.cc; --phases selects by name; the registered
// order is the order the phases run in and appear in the report and in
// results.json. Every registered phase is reported, run or not (as before:
// "ran": false), so that results.json keeps its keys whatever --phases says.

#ifndef REDLOCK_BENCH_E2E_PHASE_H_
#define REDLOCK_BENCH_E2E_PHASE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "bench/e2e/common.h"
#include "bench/e2e/floor_runner.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"

namespace redlock::testing {
class RedisCluster;
}  // namespace redlock::testing

namespace redlock::bench {

// What the phases share, set up by main before the first phase runs.
struct Context {
  bool quick = false;           // --quick
  absl::Duration ttl;           // --ttl
  std::string redis_benchmark;  // --redis_benchmark
  std::vector<Master> masters;
  FloorRunner* floor = nullptr;  // Connected and warmed up.
  // The masters this process started (masters[i] is cluster->server(i)), for
  // the phases that signal one (SIGSTOP/SIGCONT); null with --masters.
  testing::RedisCluster* cluster = nullptr;
  Memory memory;  // Phases may record their own points (main fills the rest).
};

// One line of the report's targets table.
struct Target {
  std::string what;
  std::string measured;
  bool met = false;
  bool evaluated = false;
};

// A target not measured (yet) in this run.
Target Unmeasured(std::string what);

// Latency distributions for gnuplot, by plot: PREFIX-cycle.tsv and
// PREFIX-fault.tsv (--out_cdf). Series without samples are left out.
using CdfSeries = std::vector<std::pair<std::string, std::vector<double>>>;
struct Cdf {
  CdfSeries cycle;  // Lock cycles, no fault.
  CdfSeries fault;  // N=5 with one slow master, and its no-fault baseline.
};

class Phase {
 public:
  virtual ~Phase() = default;

  // Runs the phase; only for the phases --phases names. A non-OK status
  // ends the run: main logs its message and exits with status 1.
  virtual absl::Status Run(Context& ctx) = 0;

  // The rest is called for every registered phase, in registered order,
  // after the last phase ran.

  // Adds this phase's settings to results.json's "settings".
  virtual void AddSettings(const Context& ctx, Json& settings) const = 0;
  // Adds this phase's rows to the targets table.
  virtual void AddTargets(std::vector<Target>& targets) const {}
  // Appends this phase's sections of the Markdown report.
  virtual void AppendMarkdown(const Context& ctx, std::string& md) const {}
  // Adds this phase's top-level keys to results.json.
  virtual void AddResults(Json& results) const = 0;
  // Adds this phase's latency distributions.
  virtual void AddCdf(Cdf& cdf) const {}
};

using PhaseFactory = std::unique_ptr<Phase> (*)(bool quick);

struct PhaseInfo {
  int order = 0;
  std::string name;
  PhaseFactory make = nullptr;
};

// Registers a phase at static initialisation; define one per phase file.
class RegisterPhase {
 public:
  RegisterPhase(int order, std::string name, PhaseFactory make);
};

// Every registered phase, by order.
std::vector<PhaseInfo> RegisteredPhases();

// The registered names joined by ',', in order: --phases's default.
std::string AllPhaseNames();

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_PHASE_H_
