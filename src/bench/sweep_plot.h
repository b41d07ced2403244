// A concurrency sweep of an endpoint bench drawn as throughput against latency: one SVG with two
// panels, median TTFT and median TPOT over output tokens per second, a point per concurrency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canrun {

struct SweepPoint {
  int64_t concurrency = 0;
  double output_throughput = 0;  // tokens per second
  double ttft_p50_s = 0;
  double tpot_p50_s = 0;
};

std::string throughput_latency_svg(const std::vector<SweepPoint>& points, const std::string& title);

}  // namespace canrun
