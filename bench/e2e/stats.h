// Copyright 2026 The redlock Authors.
//
// Statistics over samples: nearest-rank quantiles and a distribution summary;
// how unevenly contenders shared a lock.

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

// How unevenly a lock's grants went to its contenders, over blocks of a
// run: per block, the most grants of one contender over the least.
struct Unfairness {
  std::vector<double> ratios;   // One per block, in the order added.
  int64_t most = 0, least = 0;  // The counts of the block with the worst.

  // Adds a block from each contender's grant count (not empty). A
  // contender with no grant at all counts as 1 in the ratio, so that it
  // stays finite: most over 1.
  void AddBlock(const std::vector<int64_t>& grants_per_contender);
  // Adds `other`'s blocks after these; `most` and `least` become those of
  // a block of `other` whose ratio is above every ratio before it.
  void Add(const Unfairness& other);
  // The largest ratio; 0 with no block.
  double Worst() const;
};

}  // namespace redlock::bench

#endif  // REDLOCK_BENCH_E2E_STATS_H_
