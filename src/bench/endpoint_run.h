// Runs an endpoint bench: warm-up requests first, then the measured ones sent at their arrival
// times, at most `concurrency` in flight, each thread with its own connection.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "bench/arrivals.h"
#include "bench/endpoint_client.h"

namespace canrun {

struct EndpointRun {
  std::vector<StreamedResponse> measured;  // in request order
  double wall_s = 0;                       // from the first measured request sent to the last done
};

// `prompts`: the `warmup` warm-up prompts, then the measured ones. `concurrency` 0: no limit.
// `on_done(done, total)` follows every finished request, warm-up included.
EndpointRun run_endpoint_bench(const Endpoint& endpoint, const std::vector<EndpointPrompt>& prompts, int64_t warmup,
                               int64_t concurrency, const std::vector<double>& arrival_times,
                               const std::function<void(int64_t done, int64_t total)>& on_done = {});

}  // namespace canrun
