// Copyright 2026 The redlock Authors.
//
// redlock-sim: runs simulated histories (tests/sim/sim_world.h) seed after
// seed and checks each with the torture tool's checker. scripts/simulate.sh
// runs one per core and adds up their totals.
//
//   redlock-sim --config=safe --seed=1 --count=1000
//   redlock-sim --config=guarded --seed=1 --seconds=60 --stride=2 --offset=1
//   redlock-sim --config=legacy-grant --seed=4711 --count=1 --verbose
//   redlock-sim --config=semaphore --seed=1 --count=200 --masters=3
//
// A failing seed prints the command that replays it, the plan shrunk to the
// fewest events that still fail, that history's violations and sections, and
// (with --out) history.json and timeline.svg of the shrunk history.
// The last line is always "TOTAL key=value ...", for the script.

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tests/sim/sim_world.h"

ABSL_FLAG(std::string, config, "safe",
          "Configuration: safe, guarded, guarded-crashes, churn, "
          "guarded-churn, guarded-partial, reconfigure, semaphore, "
          "semaphore-guarded, semaphore-churn, semaphore-partial, rwlock, "
          "rwlock-guarded, rwlock-churn, rwlock-partial, election, "
          "election-guarded, election-churn, election-partial (safe); "
          "guard-off, "
          "fast-clock, legacy-grant, partial-trust-marked, "
          "membership-ignored, semaphore-counters (unsafe).");
ABSL_FLAG(uint64_t, seed, 1, "First seed.");
ABSL_FLAG(int64_t, count, 0, "Histories to run (0: until --seconds).");
ABSL_FLAG(double, seconds, 0, "Stop starting histories after this long.");
ABSL_FLAG(uint64_t, stride, 1, "Run seeds seed + offset + k * stride.");
ABSL_FLAG(uint64_t, offset, 0, "See --stride.");
ABSL_FLAG(bool, shrink, true, "Shrink a failing plan.");
ABSL_FLAG(int, max_failures, 3, "Stop after this many failing seeds.");
ABSL_FLAG(std::string, out, "",
          "Directory for failing seeds' history.json and timeline.svg.");
ABSL_FLAG(bool, verbose, false, "Print every history's plan and summary.");
ABSL_FLAG(int, clients, 0,
          "Clients per history (0: the configuration's, 3 or 4).");
ABSL_FLAG(int, operations, 0,
          "Client operations per history (0: the configuration's, 60 or "
          "100).");
ABSL_FLAG(int, faults, 6, "Faults per history.");
ABSL_FLAG(int, ttl_ms, 0,
          "Every lock's TTL in ms (0: the configuration's, 800).");
ABSL_FLAG(int, masters, 0,
          "Masters per history (0: the configuration's, 5 or 4).");

namespace redlock::sim {
namespace {

std::string Sections(const torture::History& h) {
  std::string out;
  for (const torture::Section& s : h.sections) {
    absl::StrAppendFormat(
        &out,
        "  section client %d %-6s %s fence %3d  start %9.3fms ret %9.3fms "
        "valid_until %9.3fms work_end %9.3fms release %s\n",
        s.client, s.resource,
        s.limit > 0 ? absl::StrFormat("permits %d of %d", s.permits, s.limit)
        : s.shared  ? std::string("reader")
                    : std::string("writer"),
        s.fence, s.start / 1e6, s.ret / 1e6, s.valid_until / 1e6,
        s.work_end / 1e6, s.release.empty() ? "-" : s.release);
    for (const torture::FencedWrite& w : s.fenced) {
      absl::StrAppendFormat(&out, "    fenced write %d sent %9.3fms %s\n",
                            w.fence, w.send / 1e6, w.result);
    }
  }
  for (const torture::Proclamation& p : h.proclamations) {
    absl::StrAppendFormat(&out,
                          "  proclaim client %d epoch %d revision %d %s "
                          "sent %9.3fms\n",
                          p.client, p.epoch, p.revision, p.value,
                          p.start / 1e6);
  }
  for (const torture::LeaderView& v : h.views) {
    absl::StrAppendFormat(&out,
                          "  view client %d observation %d epoch %d revision "
                          "%d %s at %9.3fms\n",
                          v.client, v.watch, v.epoch, v.revision, v.value,
                          v.at / 1e6);
  }
  for (const torture::Fault& f : h.faults) {
    absl::StrAppendFormat(&out, "  fault %-12s %s %9.3fms .. %9.3fms\n", f.kind,
                          f.targets, f.start / 1e6, f.end / 1e6);
  }
  return out;
}

std::string ReplayCommand(const WorldConfig& c, uint64_t seed) {
  return absl::StrCat(
      "redlock-sim --config=", c.name, " --seed=", seed,
      " --count=1 --verbose --clients=", c.clients,
      " --operations=", c.operations, " --faults=", c.faults,
      " --masters=", c.masters,
      c.ttl != WorldConfig().ttl
          ? absl::StrCat(" --ttl_ms=", absl::ToInt64Milliseconds(c.ttl))
          : "");
}

int Main() {
  absl::StatusOr<WorldConfig> named = NamedConfig(absl::GetFlag(FLAGS_config));
  if (!named.ok()) {
    std::fprintf(stderr, "redlock-sim: %s\n",
                 std::string(named.status().message()).c_str());
    return 2;
  }
  WorldConfig config = *named;
  if (absl::GetFlag(FLAGS_clients) != 0) {
    config.clients = absl::GetFlag(FLAGS_clients);
  }
  if (absl::GetFlag(FLAGS_operations) != 0) {
    config.operations = absl::GetFlag(FLAGS_operations);
  }
  config.faults = absl::GetFlag(FLAGS_faults);
  if (absl::GetFlag(FLAGS_masters) != 0) {
    config.masters = absl::GetFlag(FLAGS_masters);
  }
  if (absl::GetFlag(FLAGS_ttl_ms) != 0) {
    config.ttl = absl::Milliseconds(absl::GetFlag(FLAGS_ttl_ms));
  }
  if (config.clients < 1 || config.masters < 1 || config.operations < 0 ||
      config.faults < 0) {
    std::fprintf(stderr,
                 "redlock-sim: --clients and --masters must be at least 1, "
                 "--operations and --faults not negative\n");
    return 2;
  }
  if (config.membership != WorldConfig::Membership::kOff &&
      config.masters < 2) {
    std::fprintf(stderr,
                 "redlock-sim: --config=%s needs --masters of at least 2\n",
                 config.name.c_str());
    return 2;
  }
  const uint64_t stride = std::max<uint64_t>(1, absl::GetFlag(FLAGS_stride));
  const int64_t count = absl::GetFlag(FLAGS_count);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  if (count <= 0 && seconds <= 0) {
    std::fprintf(stderr, "redlock-sim: give --count or --seconds\n");
    return 2;
  }
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         started)
        .count();
  };
  int64_t histories = 0, faults = 0, operations = 0, events = 0;
  int64_t violations = 0, failing = 0;
  std::vector<std::string> failing_seeds;
  for (int64_t k = 0;; ++k) {
    if (count > 0 && k >= count) break;
    if (seconds > 0 && elapsed() >= seconds) break;
    const uint64_t seed = absl::GetFlag(FLAGS_seed) +
                          absl::GetFlag(FLAGS_offset) +
                          static_cast<uint64_t>(k) * stride;
    const Plan plan = MakePlan(config, seed);
    WorldResult result = RunWorld(config, plan);
    ++histories;
    faults += result.faults;
    operations += result.operations;
    events += result.events;
    const torture::Summary& s = result.history.summary;
    if (absl::GetFlag(FLAGS_verbose)) {
      std::printf(
          "seed %llu: %lld events, %lld operations, %lld faults, %lld "
          "operator steps (%lld masters re-marked), %lld list switches, "
          "reconfiguration phase %d\n%s%s%s",
          static_cast<unsigned long long>(seed),
          static_cast<long long>(result.events),
          static_cast<long long>(result.operations),
          static_cast<long long>(result.faults),
          static_cast<long long>(result.operator_steps),
          static_cast<long long>(result.remarked_masters),
          static_cast<long long>(result.switched_clients),
          result.reconfigure_phase, FormatPlan(plan).c_str(),
          Sections(result.history).c_str(), torture::FormatSummary(s).c_str());
    }
    if (s.violations() == 0) continue;
    violations += s.violations();
    ++failing;
    failing_seeds.push_back(absl::StrCat(seed));
    std::printf("VIOLATION config=%s seed=%llu: %lld violation(s)\n",
                config.name.c_str(), static_cast<unsigned long long>(seed),
                static_cast<long long>(s.violations()));
    for (const std::string& d : s.details) std::printf("  %s\n", d.c_str());
    std::printf("replay: %s\n", ReplayCommand(config, seed).c_str());
    if (absl::GetFlag(FLAGS_shrink)) {
      const Plan shrunk = Shrink(config, plan);
      WorldResult again = RunWorld(config, shrunk);
      std::printf("shrunk from %zu to %zu events (%lld violation(s)):\n%s%s",
                  plan.size(), shrunk.size(),
                  static_cast<long long>(again.history.summary.violations()),
                  FormatPlan(shrunk).c_str(), Sections(again.history).c_str());
      for (const std::string& d : again.history.summary.details) {
        std::printf("  %s\n", d.c_str());
      }
      if (!absl::GetFlag(FLAGS_out).empty()) {
        const std::string dir =
            absl::StrCat(absl::GetFlag(FLAGS_out), "/", config.name, "-", seed);
        ::mkdir(absl::GetFlag(FLAGS_out).c_str(), 0755);
        ::mkdir(dir.c_str(), 0755);
        absl::Status json =
            torture::WriteJson(again.history, dir + "/history.json");
        absl::Status svg =
            torture::WriteSvg(again.history, dir + "/timeline.svg");
        std::printf("shrunk history: %s/history.json %s/timeline.svg%s\n",
                    dir.c_str(), dir.c_str(),
                    json.ok() && svg.ok() ? "" : " (could not write)");
      }
    }
    std::fflush(stdout);
    if (failing >= absl::GetFlag(FLAGS_max_failures)) break;
  }
  const double took = elapsed();
  std::printf(
      "TOTAL config=%s histories=%lld operations=%lld faults=%lld "
      "events=%lld violations=%lld failing_seeds=%s seconds=%.2f\n",
      config.name.c_str(), static_cast<long long>(histories),
      static_cast<long long>(operations), static_cast<long long>(faults),
      static_cast<long long>(events), static_cast<long long>(violations),
      failing_seeds.empty() ? "-" : absl::StrJoin(failing_seeds, ",").c_str(),
      took);
  return failing == 0 ? 0 : 1;
}

}  // namespace
}  // namespace redlock::sim

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs simulated redlock histories and checks them (tests/sim).");
  absl::ParseCommandLine(argc, argv);
  return redlock::sim::Main();
}
