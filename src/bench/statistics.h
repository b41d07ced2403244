// Summaries of measured times: mean and percentiles, as numpy computes them by default.
#pragma once

#include <cstddef>
#include <vector>

namespace canrun {

// The p-th percentile (0..100) with linear interpolation between the closest ranks
// (numpy.percentile's default); 0 for no values.
double percentile(std::vector<double> values, double p);

struct Summary {
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
  size_t count = 0;
};

Summary summarize(const std::vector<double>& values);

}  // namespace canrun
