// canrun bench --endpoint URL: the serving numbers of any OpenAI-compatible server, reported as
// `vllm bench serve` users expect, at a fixed concurrency or request rate, or swept over
// concurrencies and drawn as throughput against latency.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/arrivals.h"
#include "bench/workload.h"

namespace canrun {

struct EndpointBenchOptions {
  std::string url;
  std::string tokenizer_source;  // a model folder or tokenizer.json: prompts are sent as its text
  std::string served_model;      // empty: the first model the server lists
  bool chat = false;
  ArrivalPattern arrivals;
  bool concurrency_given = false;  // else 1 at an infinite rate, no limit at a finite one
  std::string slo;
  std::vector<int64_t> sweep;  // concurrencies to run in turn
  std::string plot;            // the sweep's SVG
  double timeout_s = 600;
  int64_t vocab_size = 0;  // without a tokenizer: the token ids' range
  std::optional<double> price_per_hour;
  bool json = false;
};

void run_endpoint_bench_command(const EndpointBenchOptions& options, Workload workload);

}  // namespace canrun
