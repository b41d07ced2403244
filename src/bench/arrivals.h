// When each request of an endpoint bench is sent: all at once, or at a mean rate with gaps drawn
// from a gamma distribution as vLLM's `bench serve` draws them (burstiness 1 is a Poisson process;
// below 1 the requests come in bursts, above 1 more evenly).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace canrun {

struct ArrivalPattern {
  double rate = std::numeric_limits<double>::infinity();  // requests per second; infinite: no gaps
  double burstiness = 1;                                  // the gamma distribution's shape
};

// Seconds from the start at which each of `count` requests is sent: the first at 0, each next one
// a gamma(burstiness, 1 / (rate * burstiness)) gap later, so the mean gap is 1 / rate.
std::vector<double> arrival_times(const ArrivalPattern& pattern, int64_t count, uint64_t seed);

}  // namespace canrun
