// Measures an encoder's embeddings as a client sees them: batches of texts, each embedded in one
// call (tokenization, forward passes, pooling), timed one after another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/statistics.h"
#include "embed/sentence_model.h"

namespace canrun {

struct EmbedBenchOptions {
  int64_t batch = 32;     // texts per call
  int64_t requests = 10;  // measured calls
  int64_t warmup = 1;     // calls run first and not measured
};

struct EmbedBenchResults {
  Summary batch_latency_s;
  double sentences_per_s = 0;  // measured texts / the measured calls' time
  double tokens_per_s = 0;     // their tokens (after truncation, special tokens included) likewise
  int64_t sentences = 0, tokens = 0;
  double wall_s = 0;
};

// Call i embeds the `batch` texts from (i * batch) on, going round `texts`. Throws
// Error(kUsage) when there are no texts.
EmbedBenchResults run_embed_bench(SentenceEncoder& encoder, const std::vector<std::string>& texts,
                                  const EmbedBenchOptions& options);

}  // namespace canrun
