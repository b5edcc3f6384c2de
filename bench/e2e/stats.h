// Copyright 2026 The redlock Authors.
//
// Statistics over samples: nearest-rank quantiles and a distribution summary.

#ifndef REDLOCK_BENCH_E2E_STATS_H_
#define REDLOCK_BENCH_E2E_STATS_H_

#include <cstdint>
#include <vector>

namespace redlock::bench {

struct Dist {
  int64_t count = 0;
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
};

// Nearest-rank quantile of sorted samples.
double Quantile(const std::vector<double>& sorted, double q);

Dist Summarize(std::vector<double> v);

// The middle sample; with an even count, the mean of the two middles.
double Median(std::vector<double> v);

// a / b, or 0 when b is not positive.
double Ratio(double a, double b);

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_STATS_H_
