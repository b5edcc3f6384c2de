// Copyright 2026 The redlock Authors.
//
// results.json is built with nlohmann::ordered_json (keys keep the order they
// are added in). These helpers keep the figures as the report has always
// written them: six significant digits, null for what is not finite.

#ifndef REDLOCK_BENCH_E2E_JSON_H_
#define REDLOCK_BENCH_E2E_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/e2e/stats.h"

namespace redlock::bench {

using Json = nlohmann::ordered_json;

// `value` rounded to six significant digits (printf "%.6g"); an integer when
// the rounded value is whole, so that 10000 prints as 10000, not 10000.0;
// null when not finite.
Json Num(double value);

// Every element through Num().
Json Nums(const std::vector<double>& values);

// {"count", "min_us", "mean_us", "p50_us", "p90_us", "p99_us", "p999_us",
// "max_us"}.
Json DistJson(const Dist& d);

// Indented by two spaces; bytes that are not valid UTF-8 become U+FFFD
// instead of throwing.
std::string Dump(const Json& j);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_JSON_H_
