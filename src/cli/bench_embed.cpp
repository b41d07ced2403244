#include "cli/bench_embed.h"

#include <omp.h>

#include <chrono>
#include <iostream>

#include "cli/bench_numbers.h"
#include "cli/table.h"
#include "cli/text_lines.h"
#include "kernels/cpu/instruction_set.h"
#include "util/json.h"
#include "util/process_stats.h"

namespace canrun {
namespace {

std::string milliseconds(double seconds) { return fixed(seconds * 1000, 2) + " ms"; }

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
  // Cost per million texts at the machine's price, when given.
  const Json cost = command.price_per_hour && results.sentences_per_s > 0
                        ? Json(*command.price_per_hour / 3600.0 / results.sentences_per_s * 1e6)
                        : Json(nullptr);
  if (command.json) {
    const Summary& latency = results.batch_latency_s;
    std::cout << Json{{"model", command.model_dir},
                      {"task", "feature-extraction"},
                      {"backend", command.backend},
                      {"instruction_set", std::string(cpu::instruction_set_name(cpu::chosen_instruction_set()))},
                      {"threads", command.threads > 0 ? command.threads : omp_get_max_threads()},
                      {"batch", command.bench.batch},
                      {"requests", command.bench.requests},
                      {"warmup", command.bench.warmup},
                      {"open_s", open_s},
                      {"sentences", results.sentences},
                      {"tokens", results.tokens},
                      {"sentences_per_s", results.sentences_per_s},
                      {"tokens_per_s", results.tokens_per_s},
                      {"batch_latency_s",
                       {{"mean", latency.mean}, {"p50", latency.p50}, {"p95", latency.p95}, {"max", latency.max}}},
                      {"peak_rss_bytes", peak_rss},
                      {"cost_per_million_sentences", cost}}
                     .dump(2)
              << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"model", command.model_dir + " (feature-extraction, " + command.backend + ")"},
      {"open", fixed(open_s, 2) + " s (load and compile)"},
      {"batches", std::to_string(command.bench.requests) + " of " + std::to_string(command.bench.batch) +
                      " texts, after " + std::to_string(command.bench.warmup) + " warm-up"},
      {"throughput", fixed(results.sentences_per_s, 1) + " sentences/s, " + fixed(results.tokens_per_s, 0) +
                         " tokens/s"},
      {"batch latency", "p50 " + milliseconds(results.batch_latency_s.p50) + ", p95 " +
                            milliseconds(results.batch_latency_s.p95)},
      {"peak memory", std::to_string(peak_rss >> 20) + " MiB resident"}};
  if (!cost.is_null())
    rows.push_back({"cost", "$" + fixed(cost.get<double>(), 4) + " per million texts at $" +
                                fixed(*command.price_per_hour, 2) + "/hour"});
  print_aligned_table(rows);
}

}  // namespace canrun
