#include "bench/arrivals.h"

#include <cmath>
#include <random>

namespace canrun {

std::vector<double> arrival_times(const ArrivalPattern& pattern, int64_t count, uint64_t seed) {
  std::vector<double> times(static_cast<size_t>(std::max<int64_t>(0, count)), 0.0);
  if (std::isinf(pattern.rate)) return times;
  std::mt19937_64 random(seed);
  std::gamma_distribution<double> gap(pattern.burstiness, 1.0 / (pattern.rate * pattern.burstiness));
  for (size_t i = 1; i < times.size(); ++i) times[i] = times[i - 1] + gap(random);
  return times;
}

}  // namespace canrun
