// Numbers as `canrun bench` prints them, for its own runs and for a server's: fixed decimals,
// a latency summary in JSON, the cost of a million tokens.
#pragma once

#include <optional>
#include <string>

#include "bench/statistics.h"
#include "util/json.h"

namespace canrun {

std::string fixed(double value, int digits);

// mean, p50, p90, p95, p99, max and count.
Json summary_json(const Summary& summary);

// The cost of a million tokens at `tokens_per_s` on a machine of `price_per_hour`; null without
// a price or a rate.
Json cost_per_million(const std::optional<double>& price_per_hour, double tokens_per_s);

}  // namespace canrun
