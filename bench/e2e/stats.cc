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

void Unfairness::AddBlock(const std::vector<int64_t>& grants_per_contender) {
  Unfairness block;
  block.most = *std::max_element(grants_per_contender.begin(),
                                 grants_per_contender.end());
  block.least = *std::min_element(grants_per_contender.begin(),
                                  grants_per_contender.end());
  block.ratios.push_back(
      static_cast<double>(block.most) /
      static_cast<double>(std::max<int64_t>(1, block.least)));
  Add(block);
}

void Unfairness::Add(const Unfairness& other) {
  for (double u : other.ratios) {
    if (ratios.empty() || u > Worst()) {
      most = other.most;
      least = other.least;
    }
    ratios.push_back(u);
  }
}

double Unfairness::Worst() const {
  return ratios.empty() ? 0 : *std::max_element(ratios.begin(), ratios.end());
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace redlock::bench
