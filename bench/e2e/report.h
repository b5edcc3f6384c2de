// Copyright 2026 The redlock Authors.
//
// The report: the Markdown on stdout (environment, each phase's sections,
// targets), results.json (--out_json) and the gnuplot distributions
// (--out_cdf), each put together from the registered phases. Also the
// number formats the Markdown uses.

#ifndef REDLOCK_BENCH_E2E_REPORT_H_
#define REDLOCK_BENCH_E2E_REPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "bench/e2e/environment.h"
#include "bench/e2e/json.h"
#include "bench/e2e/phase.h"

namespace redlock::bench {

// Microseconds as the tables print them.
std::string Us(double us);
// A ratio: "1.23×".
std::string X(double ratio);
// Per-round ratios as "min / median / max"; `empty` if there are none.
std::string Spread(std::vector<double> ratios, absl::string_view empty = "");

using PhaseList = std::vector<std::unique_ptr<Phase>>;

// What the report says about the run as a whole.
struct RunSummary {
  Environment env;
  double wall_s = 0;  // The harness, from start to the last phase.
};

// Every phase's targets, in phase order.
std::vector<Target> CollectTargets(const PhaseList& phases);

std::string MarkdownReport(const RunSummary& run, const Context& ctx,
                           const PhaseList& phases,
                           const std::vector<Target>& targets);

Json ResultsJson(const RunSummary& run, const Context& ctx,
                 const PhaseList& phases, const std::vector<Target>& targets);

// PREFIX-cycle.tsv and PREFIX-fault.tsv.
void WriteCdfFiles(const std::string& prefix, const PhaseList& phases);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_REPORT_H_
