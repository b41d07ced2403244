// Runs a bench workload on an open session: warm-up requests, then the measured ones, up to a
// fixed number decoding together, and the times a migration decision needs from each.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/statistics.h"
#include "bench/workload.h"
#include "runtime/session.h"
#include "vision/image_processor.h"

namespace canrun {

struct RequestMeasurement {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double first_token_s = 0;  // from the request's start (its images' encoding included) to its first token
  std::optional<double> vision_s;  // the vision tower's time on the request's images
  double prefill_s = 0;
  double decode_s = 0;                    // the tokens after the first
  std::vector<double> token_latencies_s;  // between consecutive generated tokens
  int64_t drafted_tokens = 0, accepted_tokens = 0;  // speculative decoding's
  std::string error;                      // empty: it ran
};

struct BenchRun {
  std::vector<RequestMeasurement> measured;  // in request order
  double wall_s = 0;                         // from the first measured start to the last end
};

// Up to `workload.concurrency` requests decode together, a token each per step on `threads`
// OpenMP threads (Session::step_batch); a request's prefill runs when it starts, as another ends.
// `on_done(done, total)` follows every finished request, warm-up included.
BenchRun run_bench(Session& session, const std::vector<BenchRequest>& requests, const Workload& workload,
                   int threads, const std::function<void(int64_t done, int64_t total)>& on_done = {});

struct BenchResults {
  Summary first_token_s;
  Summary vision_s;  // per request with images
  Summary token_latency_s;
  double prefill_tokens_per_s = 0;     // measured prompt tokens / their prefill time
  double decode_tokens_per_s = 0;      // per request in flight: decode tokens / decode time
  double throughput_tokens_per_s = 0;  // generated tokens of all measured requests / wall time
  int64_t prompt_tokens = 0;  // image tokens included
  int64_t generated_tokens = 0;
  int64_t drafted_tokens = 0, accepted_tokens = 0;  // speculative decoding's, over the measured requests
  int64_t failures = 0;
  std::vector<std::string> errors;  // distinct messages, first seen first
};

BenchResults summarize_run(const BenchRun& run);

}  // namespace canrun
