#include "cli/bench_endpoint.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "bench/endpoint_run.h"
#include "bench/serving_metrics.h"
#include "bench/sweep_plot.h"
#include "cli/bench_numbers.h"
#include "cli/table.h"
#include "util/atomic_file.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

std::string ms(double seconds) { return fixed(seconds * 1000, 2); }

// Prompts of random token ids as the workload draws them; as text when a tokenizer is given (the
// server then counts the tokens itself), else as token ids.
std::vector<EndpointPrompt> make_prompts(const EndpointBenchOptions& options, const Workload& workload) {
  std::optional<Tokenizer> tokenizer;
  if (!options.tokenizer_source.empty()) {
    std::filesystem::path path = options.tokenizer_source;
    if (std::filesystem::is_directory(path)) path /= "tokenizer.json";
    if (!std::filesystem::exists(path))
      fail(ErrorKind::kIo, options.tokenizer_source + ": no tokenizer.json (the prompts' text comes from it)");
    tokenizer = Tokenizer::from_file(path.string());
  }
  const int64_t vocab = tokenizer ? static_cast<int64_t>(tokenizer->vocab_size()) : options.vocab_size;
  std::vector<EndpointPrompt> prompts;
  for (const BenchRequest& request : make_requests(workload, vocab)) {
    EndpointPrompt prompt;
    prompt.ids = request.prompt;
    prompt.output_tokens = request.output_tokens;
    if (tokenizer) {
      prompt.text = tokenizer->decode(prompt.ids);
      prompt.as_text = true;
    }
    prompts.push_back(std::move(prompt));
  }
  return prompts;
}

struct Level {
  int64_t concurrency = 0;  // 0: no limit
  ServingResults results;
};

Json level_json(const EndpointBenchOptions& options, const Endpoint& endpoint, const Workload& workload,
                const Slo& slo, const Level& level) {
  const ServingResults& r = level.results;
  return {{"endpoint", endpoint.origin + endpoint.path},
          {"model", endpoint.model},
          {"api", endpoint.chat ? "chat" : "completions"},
          {"prompts", options.tokenizer_source.empty() ? "token ids" : "text"},
          {"workload",
           {{"prompt_tokens", workload.prompt.text()},
            {"output_tokens", workload.output.text()},
            {"requests", workload.requests},
            {"warmup", workload.warmup},
            {"concurrency", level.concurrency > 0 ? Json(level.concurrency) : Json(nullptr)},
            {"request_rate", std::isinf(options.arrivals.rate) ? Json(nullptr) : Json(options.arrivals.rate)},
            {"burstiness", options.arrivals.burstiness},
            {"seed", workload.seed}}},
          {"completed", r.completed},
          {"failures", r.failed},
          {"errors", r.errors},
          {"wall_s", r.duration_s},
          {"prompt_tokens", r.prompt_tokens},
          {"generated_tokens", r.output_tokens},
          {"short_outputs", r.short_outputs},
          {"request_throughput", r.request_throughput},
          {"throughput_tokens_per_s", r.output_throughput},
          {"total_token_throughput", r.total_token_throughput},
          {"first_token_s", summary_json(r.ttft_s)},
          {"tpot_s", summary_json(r.tpot_s)},
          {"token_latency_s", summary_json(r.itl_s)},
          {"e2el_s", summary_json(r.e2el_s)},
          {"slo", slo.empty() ? Json(nullptr) : Json(slo.text())},
          {"good_requests", r.good_requests},
          {"goodput_requests_per_s", r.goodput},
          {"price_per_hour", options.price_per_hour ? Json(*options.price_per_hour) : Json(nullptr)},
          {"cost_per_million_generated_tokens", cost_per_million(options.price_per_hour, r.output_throughput)},
          {"cost_per_million_tokens", cost_per_million(options.price_per_hour, r.total_token_throughput)}};
}

std::string latency_cells(const Summary& s) {
  return ms(s.mean) + " / " + ms(s.p50) + " / " + ms(s.p90) + " / " + ms(s.p95) + " / " + ms(s.p99);
}

void print_level(const EndpointBenchOptions& options, const Endpoint& endpoint, const Workload& workload,
                 const Slo& slo, const Level& level) {
  const ServingResults& r = level.results;
  std::cout << "canrun bench --endpoint " << endpoint.origin << endpoint.path << ": model " << endpoint.model
            << "\nworkload: prompt " << workload.prompt.text() << " tokens ("
            << (options.tokenizer_source.empty() ? "token ids" : "text") << "), output " << workload.output.text()
            << " tokens, " << workload.requests << " requests after " << workload.warmup << " warm-up, "
            << (level.concurrency > 0 ? "concurrency " + std::to_string(level.concurrency) : "no concurrency limit")
            << ", "
            << (std::isinf(options.arrivals.rate) ? "all sent at once"
                                                  : fixed(options.arrivals.rate, 2) + " requests/s (burstiness " +
                                                        fixed(options.arrivals.burstiness, 2) + ")")
            << ", seed " << workload.seed << "\n\n";
  std::vector<std::vector<std::string>> rows = {{"measure", "value"}};
  rows.push_back({"requests", std::to_string(r.completed) + " completed, " + std::to_string(r.failed) + " failed"});
  rows.push_back({"duration", fixed(r.duration_s, 2) + " s"});
  rows.push_back({"tokens", std::to_string(r.prompt_tokens) + " prompt, " + std::to_string(r.output_tokens) +
                                " generated" +
                                (r.short_outputs ? " (" + std::to_string(r.short_outputs) +
                                                       " requests got fewer than they asked for)"
                                                 : "")});
  rows.push_back({"request throughput", fixed(r.request_throughput, 2) + " requests/s"});
  rows.push_back({"output token throughput", fixed(r.output_throughput, 2) + " tokens/s"});
  rows.push_back({"total token throughput", fixed(r.total_token_throughput, 2) + " tokens/s"});
  rows.push_back({"latency (ms)", "mean / p50 / p90 / p95 / p99"});
  rows.push_back({"  time to first token", latency_cells(r.ttft_s)});
  rows.push_back({"  time per output token", latency_cells(r.tpot_s)});
  rows.push_back({"  inter-token latency", latency_cells(r.itl_s)});
  rows.push_back({"  end-to-end latency", latency_cells(r.e2el_s)});
  if (!slo.empty())
    rows.push_back({"goodput", fixed(r.goodput, 2) + " requests/s (" + std::to_string(r.good_requests) + " of " +
                                   std::to_string(r.completed + r.failed) + " within " + slo.text() + ")"});
  if (options.price_per_hour) {
    const Json cost = cost_per_million(options.price_per_hour, r.output_throughput);
    rows.push_back({"cost", cost.is_null() ? "- (nothing generated)"
                                           : "$" + fixed(cost.get<double>(), 4) + " per million generated tokens at $" +
                                                 fixed(*options.price_per_hour, 2) + "/hour"});
  }
  print_aligned_table(rows);
  for (const std::string& error : r.errors) std::cout << "error: " << error << "\n";
}

void print_sweep(const std::vector<Level>& levels) {
  std::vector<std::vector<std::string>> rows = {{"concurrency", "completed", "failed", "short", "requests/s",
                                                 "output tokens/s",
                                                 "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms",
                                                 "ITL p95 ms"}};
  for (const Level& level : levels) {
    const ServingResults& r = level.results;
    rows.push_back({std::to_string(level.concurrency), std::to_string(r.completed), std::to_string(r.failed),
                    std::to_string(r.short_outputs), fixed(r.request_throughput, 2), fixed(r.output_throughput, 2), ms(r.ttft_s.p50), ms(r.ttft_s.p95),
                    ms(r.tpot_s.p50), ms(r.tpot_s.p95), ms(r.itl_s.p95)});
  }
  print_aligned_table(rows);
}

}  // namespace

void run_endpoint_bench_command(const EndpointBenchOptions& options, Workload workload) {
  if (options.chat && options.tokenizer_source.empty())
    fail(ErrorKind::kUsage, "--api chat sends text: give a model folder or tokenizer.json (MODEL_DIR) to draw it from");
  if (options.tokenizer_source.empty() && options.vocab_size <= 0)
    fail(ErrorKind::kUsage, "--endpoint without MODEL_DIR sends token ids: give --vocab-size, or a model folder or "
                            "tokenizer.json whose text to send");
  if (!options.plot.empty() && options.sweep.empty())
    fail(ErrorKind::kUsage, "--plot draws a concurrency sweep: give --sweep-concurrency too");
  const Slo slo = options.slo.empty() ? Slo{} : parse_slo(options.slo);
  Endpoint endpoint = parse_endpoint(options.url, options.chat);
  endpoint.timeout_s = options.timeout_s;
  if (const char* key = std::getenv("OPENAI_API_KEY")) endpoint.api_key = key;
  {
    EndpointClient client(endpoint);
    const std::vector<std::string> models = client.served_models();
    if (options.served_model.empty()) endpoint.model = models.front();
    else endpoint.model = options.served_model;
  }
  const std::vector<EndpointPrompt> prompts = make_prompts(options, workload);
  const std::vector<double> arrivals = arrival_times(options.arrivals, workload.requests, workload.seed);

  std::vector<int64_t> concurrencies = options.sweep;
  if (concurrencies.empty())
    concurrencies.push_back(options.concurrency_given || std::isinf(options.arrivals.rate) ? workload.concurrency : 0);
  const bool terminal = isatty(STDERR_FILENO);
  std::vector<Level> levels;
  for (const int64_t concurrency : concurrencies) {
    const EndpointRun run = run_endpoint_bench(endpoint, prompts, workload.warmup, concurrency, arrivals,
                                               [&](int64_t done, int64_t total) {
      if (terminal)
        std::cerr << "\rbench: concurrency " << concurrency << ": " << done << "/" << total << " requests done"
                  << std::flush;
    });
    if (terminal) std::cerr << "\n";
    levels.push_back({concurrency, summarize_serving(run.measured, run.wall_s, slo)});
  }

  if (options.json) {
    if (levels.size() == 1) {
      std::cout << level_json(options, endpoint, workload, slo, levels.front()).dump(2) << "\n";
    } else {
      Json sweep = Json::array();
      for (const Level& level : levels) sweep.push_back(level_json(options, endpoint, workload, slo, level));
      std::cout << sweep.dump(2) << "\n";
    }
  } else if (levels.size() == 1) {
    print_level(options, endpoint, workload, slo, levels.front());
  } else {
    print_sweep(levels);
  }
  if (!options.plot.empty()) {
    std::vector<SweepPoint> points;
    for (const Level& level : levels)
      points.push_back({level.concurrency, level.results.output_throughput, level.results.ttft_s.p50,
                        level.results.tpot_s.p50});
    write_file_atomically(options.plot, throughput_latency_svg(points, endpoint.model + " at " + endpoint.origin));
    if (!options.json) std::cout << "plot: " << options.plot << "\n";
  }
  int64_t failed = 0, sent = 0;
  std::string first_error;
  for (const Level& level : levels) {
    failed += level.results.failed;
    sent += level.results.completed + level.results.failed;
    if (first_error.empty() && !level.results.errors.empty()) first_error = level.results.errors.front();
  }
  if (failed > 0)
    fail(ErrorKind::kRuntime,
         std::to_string(failed) + " of " + std::to_string(sent) + " requests failed: " + first_error);
}

}  // namespace canrun
