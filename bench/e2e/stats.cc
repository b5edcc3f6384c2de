// Copyright 2026 The redlock Authors.

#include "bench/e2e/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace redlock::bench {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Dist Summarize(std::vector<double> v) {
  Dist d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = static_cast<int64_t>(v.size());
  d.min = v.front();
  d.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / v.size();
  d.p50 = Quantile(v, 0.50);
  d.p90 = Quantile(v, 0.90);
  d.p99 = Quantile(v, 0.99);
  d.p999 = Quantile(v, 0.999);
  return d;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // An even count has two middles: their mean, not the lower one (nearest
  // rank), which printed the lower of two rounds as "the median".
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace redlock::bench
