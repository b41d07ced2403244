#include "bench/embed_bench.h"

#include <chrono>
#include <numeric>

#include "util/error.h"

namespace canrun {

EmbedBenchResults run_embed_bench(const EmbedBatch& embed, const std::vector<std::string>& texts,
                                  const EmbedBenchOptions& options) {
  if (texts.empty()) fail(ErrorKind::kUsage, "no texts to embed");
  EmbedBenchResults results;
  std::vector<double> latencies;
  size_t next = 0;
  for (int64_t call = 0; call < options.warmup + options.requests; ++call) {
    std::vector<std::string> batch;
    for (int64_t i = 0; i < options.batch; ++i, next = (next + 1) % texts.size()) batch.push_back(texts[next]);
    const auto start = std::chrono::steady_clock::now();
    const EmbedCall done = embed(batch);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (call < options.warmup) continue;
    if (!done.error.empty()) {
      if (results.failures++ == 0) results.first_error = done.error;
      continue;
    }
    latencies.push_back(seconds);
    results.sentences += options.batch;
    results.tokens += done.tokens;
  }
  results.batch_latency_s = summarize(latencies);
  results.wall_s = std::accumulate(latencies.begin(), latencies.end(), 0.0);
  if (results.wall_s > 0) {
    results.sentences_per_s = static_cast<double>(results.sentences) / results.wall_s;
    results.tokens_per_s = static_cast<double>(results.tokens) / results.wall_s;
  }
  return results;
}

EmbedBenchResults run_embed_bench(SentenceEncoder& encoder, const std::vector<std::string>& texts,
                                  const EmbedBenchOptions& options) {
  return run_embed_bench(
      [&encoder](const std::vector<std::string>& batch) {
        const Embeddings embeddings = encoder.embed(batch, EmbedOptions{});
        return EmbedCall{std::accumulate(embeddings.token_counts.begin(), embeddings.token_counts.end(), int64_t{0}), ""};
      },
      texts, options);
}

}  // namespace canrun
