#include "cli/bench_numbers.h"

#include <cstdio>

namespace canrun {

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

Json summary_json(const Summary& summary) {
  return {{"mean", summary.mean}, {"p50", summary.p50}, {"p90", summary.p90}, {"p95", summary.p95},
          {"p99", summary.p99},   {"max", summary.max}, {"count", summary.count}};
}

Json cost_per_million(const std::optional<double>& price_per_hour, double tokens_per_s) {
  if (!price_per_hour || tokens_per_s <= 0) return nullptr;
  return *price_per_hour / 3600.0 / tokens_per_s * 1e6;
}

}  // namespace canrun
