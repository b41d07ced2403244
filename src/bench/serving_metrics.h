// The serving numbers of an endpoint bench as `vllm bench serve` reports them: completed and failed
// requests, request and token throughput, TTFT, TPOT, ITL and end-to-end latency, and goodput:
// the requests per second that met every service-level objective.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/endpoint_client.h"
#include "bench/statistics.h"

namespace canrun {

// Upper bounds a good request keeps, in seconds.
struct Slo {
  std::optional<double> ttft_s;
  std::optional<double> tpot_s;
  std::optional<double> e2el_s;
  bool empty() const { return !ttft_s && !tpot_s && !e2el_s; }
  std::string text() const;  // "ttft<=500ms, tpot<=50ms"
};

// "ttft=500ms,tpot=50ms,e2el=2s": each of ttft, tpot, e2el at most once, in ms or s.
// Throws Error(kUsage) naming --slo and the part that is wrong.
Slo parse_slo(std::string_view text);

struct ServingResults {
  int64_t completed = 0;
  int64_t failed = 0;
  int64_t prompt_tokens = 0;  // of the completed requests
  int64_t output_tokens = 0;
  int64_t short_outputs = 0;  // completed with fewer tokens than max_tokens asked for
  double duration_s = 0;
  double request_throughput = 0;      // completed requests per second
  double output_throughput = 0;       // output tokens per second
  double total_token_throughput = 0;  // prompt and output tokens per second
  Summary ttft_s;
  Summary tpot_s;  // per request: (latency - TTFT) / (output tokens - 1), requests of 2 tokens or more
  Summary itl_s;   // every gap between streamed chunks
  Summary e2el_s;
  int64_t good_requests = 0;  // completed within every objective (all completed when there is none)
  double goodput = 0;         // good requests per second
  std::vector<std::string> errors;  // distinct messages, first seen first
};

ServingResults summarize_serving(const std::vector<StreamedResponse>& responses, double duration_s, const Slo& slo);

}  // namespace canrun
