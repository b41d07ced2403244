#include "cli/bench_embed.h"

#include <omp.h>

#include <chrono>
#include <iostream>

#include "bench/endpoint_client.h"
#include "cli/bench_numbers.h"
#include "cli/table.h"
#include "cli/text_lines.h"
#include "kernels/cpu/instruction_set.h"
#include "util/error.h"
#include "util/json.h"
#include "util/process_stats.h"

namespace canrun {
namespace {

std::string milliseconds(double seconds) { return fixed(seconds * 1000, 2) + " ms"; }

// What was measured, after `header` (the fields and rows saying what ran where): as JSON, or as
// a table.
void report(const EmbedBenchResults& results, const EmbedBenchOptions& bench, Json header,
            std::vector<std::vector<std::string>> rows, std::optional<double> price_per_hour, bool json) {
  // Cost per million texts at the machine's price, when given.
  const Json cost = price_per_hour && results.sentences_per_s > 0
                        ? Json(*price_per_hour / 3600.0 / results.sentences_per_s * 1e6)
                        : Json(nullptr);
  if (json) {
    const Summary& latency = results.batch_latency_s;
    header.update(Json{{"task", "feature-extraction"},
                       {"batch", bench.batch},
                       {"requests", bench.requests},
                       {"warmup", bench.warmup},
                       {"sentences", results.sentences},
                       {"tokens", results.tokens},
                       {"sentences_per_s", results.sentences_per_s},
                       {"tokens_per_s", results.tokens_per_s},
                       {"batch_latency_s",
                        {{"mean", latency.mean}, {"p50", latency.p50}, {"p95", latency.p95}, {"max", latency.max}}},
                       {"failures", results.failures},
                       {"first_error", results.first_error.empty() ? Json(nullptr) : Json(results.first_error)},
                       {"cost_per_million_sentences", cost}});
    std::cout << header.dump(2) << "\n";
    return;
  }
  rows.push_back({"batches", std::to_string(bench.requests) + " of " + std::to_string(bench.batch) + " texts, after " +
                                 std::to_string(bench.warmup) + " warm-up"});
  rows.push_back({"throughput", fixed(results.sentences_per_s, 1) + " sentences/s, " +
                                    fixed(results.tokens_per_s, 0) + " tokens/s"});
  rows.push_back({"batch latency", "p50 " + milliseconds(results.batch_latency_s.p50) + ", p95 " +
                                       milliseconds(results.batch_latency_s.p95)});
  if (results.failures > 0)
    rows.push_back({"failures", std::to_string(results.failures) + " of " + std::to_string(bench.requests) +
                                    " (first: " + results.first_error + ")"});
  if (!cost.is_null())
    rows.push_back({"cost", "$" + fixed(cost.get<double>(), 4) + " per million texts at $" +
                                fixed(*price_per_hour, 2) + "/hour"});
  print_aligned_table(rows);
}

}  // namespace

void run_embed_bench_command(const EmbedBenchCommand& command) {
  const std::vector<std::string> texts = read_text_lines(command.texts, "--texts");
  if (command.threads > 0) omp_set_num_threads(command.threads);
  const auto start = std::chrono::steady_clock::now();
  Session session(command.model_dir, command.session);
  SentenceEncoder encoder(session);
  const double open_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const EmbedBenchResults results = run_embed_bench(encoder, texts, command.bench);
  const int64_t peak_rss = peak_resident_bytes();
  const Json header{{"model", command.model_dir},
                    {"backend", command.backend},
                    {"instruction_set", std::string(cpu::instruction_set_name(cpu::chosen_instruction_set()))},
                    {"threads", command.threads > 0 ? command.threads : omp_get_max_threads()},
                    {"open_s", open_s},
                    {"peak_rss_bytes", peak_rss}};
  report(results, command.bench, header,
         {{"model", command.model_dir + " (feature-extraction, " + command.backend + ")"},
          {"open", fixed(open_s, 2) + " s (load and compile)"},
          {"peak memory", std::to_string(peak_rss >> 20) + " MiB resident"}},
         command.price_per_hour, command.json);
}

void run_endpoint_embed_bench_command(const EndpointEmbedBenchCommand& command) {
  const std::vector<std::string> texts = read_text_lines(command.texts, "--texts");
  Endpoint endpoint = parse_endpoint(command.url, /*chat=*/false);
  endpoint.timeout_s = command.timeout_s;
  if (const char* key = std::getenv("OPENAI_API_KEY"); key != nullptr) endpoint.api_key = key;
  EndpointClient client(endpoint);
  endpoint.model = command.served_model.empty() ? client.served_models().front() : command.served_model;
  const EmbedBenchResults results = run_embed_bench(
      [&client](const std::vector<std::string>& batch) {
        const EmbeddingsResponse response = client.embed(batch);
        return EmbedCall{response.tokens, response.error};
      },
      texts, command.bench);
  if (results.failures == command.bench.requests)
    fail(ErrorKind::kRuntime, command.url + ": every /v1/embeddings request failed (first: " + results.first_error + ")");
  report(results, command.bench, Json{{"endpoint", endpoint.origin}, {"model", endpoint.model}},
         {{"endpoint", endpoint.origin + " /v1/embeddings (" + endpoint.model + ", feature-extraction)"}},
         command.price_per_hour, command.json);
}

}  // namespace canrun
