#include "bench/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace canrun {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

Summary summarize(const std::vector<double>& values) {
  Summary summary;
  summary.count = values.size();
  if (values.empty()) return summary;
  summary.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  summary.p50 = percentile(values, 50);
  summary.p90 = percentile(values, 90);
  summary.p95 = percentile(values, 95);
  summary.p99 = percentile(values, 99);
  summary.max = *std::max_element(values.begin(), values.end());
  return summary;
}

}  // namespace canrun
