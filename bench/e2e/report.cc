// Copyright 2026 The redlock Authors.

#include "bench/e2e/report.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/e2e/stats.h"

namespace redlock::bench {
namespace {

std::string EnvironmentMarkdown(const RunSummary& run, const Context& ctx) {
  const Environment& env = run.env;
  std::string md;
  absl::StrAppend(&md, "### Environment\n\n| | |\n|---|---|\n");
  absl::StrAppend(&md, "| date | ", env.date_utc, " |\n");
  absl::StrAppend(&md, "| masters | ", env.masters, " ",
                  env.own_masters ? "redis-server processes started by the "
                                    "harness on 127.0.0.1 (no persistence)"
                                  : "external (--masters)",
                  " |\n");
  absl::StrAppend(&md, "| redis-server | ", env.redis_version, " |\n");
  absl::StrAppend(&md, "| redis-benchmark | ", env.redis_benchmark_version,
                  " |\n");
  absl::StrAppend(&md, "| hiredis / libevent / Abseil | ", env.hiredis_version,
                  " / ", env.libevent_version, " / ", env.abseil_version,
                  " |\n");
  absl::StrAppend(&md, "| compiler | ", env.compiler,
                  env.optimized ? " (optimised)" : " (NOT optimised)", " |\n");
  absl::StrAppend(&md, "| kernel | ", env.kernel, " |\n");
  absl::StrAppend(&md, "| CPU | ", env.cpu_model, ", ", env.cores,
                  " cores online (shared by the client, every master and "
                  "redis-benchmark) |\n");
  absl::StrAppend(
      &md, "| mode | ",
      ctx.quick ? "--quick (smoke: too few samples for the tails)" : "full",
      "; harness wall time ", absl::StrFormat("%.0f", run.wall_s), " s |\n\n");
  return md;
}

std::string TargetsMarkdown(const std::vector<Target>& targets) {
  std::string md;
  absl::StrAppend(
      &md, "### Targets\n\n| target | this run | met |\n|---|---|---|\n");
  for (const Target& t : targets) {
    absl::StrAppend(&md, "| ", t.what, " | ",
                    t.evaluated ? t.measured : "not measured", " | ",
                    !t.evaluated ? "—"
                    : t.met      ? "yes"
                                 : "**no**",
                    " |\n");
  }
  return md;
}

Json EnvironmentJson(const Environment& env) {
  Json j = Json::object();
  j["date_utc"] = env.date_utc;
  j["redis_server"] = env.redis_version;
  j["redis_benchmark"] = env.redis_benchmark_version;
  j["hiredis"] = env.hiredis_version;
  j["libevent"] = env.libevent_version;
  j["abseil"] = env.abseil_version;
  j["compiler"] = env.compiler;
  j["optimized"] = env.optimized;
  j["kernel"] = env.kernel;
  j["cpu"] = env.cpu_model;
  j["cores"] = env.cores;
  j["own_masters"] = env.own_masters;
  j["masters"] = env.masters;
  return j;
}

void WriteCdf(const std::string& path, const CdfSeries& series) {
  std::ofstream out(path);
  static const double kQuantiles[] = {
      0.0,   0.05, 0.1,   0.2,   0.3,   0.4,   0.5,   0.6,   0.7,    0.75,
      0.8,   0.85, 0.9,   0.92,  0.94,  0.95,  0.96,  0.97,  0.975,  0.98,
      0.985, 0.99, 0.992, 0.994, 0.995, 0.996, 0.997, 0.998, 0.9985, 0.999};
  bool first = true;
  for (const auto& [name, samples] : series) {
    if (samples.empty()) continue;
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    if (!first) out << "\n\n";
    first = false;
    out << "\"" << name << "\"\t\"quantile\"\n";
    for (double q : kQuantiles) {
      // 1/(1-q) is the "nines" axis of the plot; q = 0 gives 1.
      if (q > 0 && sorted.size() < 1.0 / (1.0 - q)) break;
      out << absl::StrFormat("%.2f\t%.4f\n", Quantile(sorted, q), q);
    }
  }
}

}  // namespace

std::string Us(double us) {
  if (us >= 10000) return absl::StrFormat("%.0f", us);
  if (us >= 100) return absl::StrFormat("%.0f", us);
  return absl::StrFormat("%.1f", us);
}
std::string X(double ratio) { return absl::StrFormat("%.2f×", ratio); }

std::string Spread(std::vector<double> ratios, absl::string_view empty) {
  if (ratios.empty()) return std::string(empty);
  std::sort(ratios.begin(), ratios.end());
  return absl::StrCat(X(ratios.front()), " / ", X(Median(ratios)), " / ",
                      X(ratios.back()));
}

std::vector<Target> CollectTargets(const PhaseList& phases) {
  std::vector<Target> targets;
  for (const auto& phase : phases) phase->AddTargets(targets);
  return targets;
}

std::string MarkdownReport(const RunSummary& run, const Context& ctx,
                           const PhaseList& phases,
                           const std::vector<Target>& targets) {
  std::string md = EnvironmentMarkdown(run, ctx);
  for (const auto& phase : phases) phase->AppendMarkdown(ctx, md);
  absl::StrAppend(&md, TargetsMarkdown(targets));
  return md;
}

Json ResultsJson(const RunSummary& run, const Context& ctx,
                 const PhaseList& phases, const std::vector<Target>& targets) {
  Json j = Json::object();
  j["environment"] = EnvironmentJson(run.env);
  Json settings = Json::object();
  settings["quick"] = ctx.quick;
  for (const auto& phase : phases) phase->AddSettings(ctx, settings);
  settings["harness_wall_s"] = Num(run.wall_s);
  j["settings"] = std::move(settings);
  for (const auto& phase : phases) phase->AddResults(j);
  Json memory = Json::object();
  memory["rss_start_kb"] = ctx.memory.start_kb;
  memory["rss_with_floor_kb"] = ctx.memory.with_floor_kb;
  memory["rss_with_latency_clients_kb"] = ctx.memory.with_latency_clients_kb;
  memory["rss_end_kb"] = ctx.memory.end_kb;
  memory["peak_rss_kb"] = ctx.memory.peak_kb;
  j["memory"] = std::move(memory);
  Json rows = Json::array();
  for (const Target& t : targets) {
    Json row = Json::object();
    row["target"] = t.what;
    row["measured"] = t.measured;
    row["evaluated"] = t.evaluated;
    row["met"] = t.met;
    rows.push_back(std::move(row));
  }
  j["targets"] = std::move(rows);
  return j;
}

void WriteCdfFiles(const std::string& prefix, const PhaseList& phases) {
  Cdf cdf;
  for (const auto& phase : phases) phase->AddCdf(cdf);
  WriteCdf(absl::StrCat(prefix, "-cycle.tsv"), cdf.cycle);
  WriteCdf(absl::StrCat(prefix, "-fault.tsv"), cdf.fault);
}

}  // namespace redlock::bench
