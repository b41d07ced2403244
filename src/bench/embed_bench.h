// Measures an encoder's embeddings as a client sees them: batches of texts, each embedded in one
// call (tokenization, forward passes, pooling; or a server's /v1/embeddings request), timed one
// after another.
#pragma once

#include <cstdint>
#include <functional>
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
  Summary batch_latency_s;     // of the calls that succeeded
  double sentences_per_s = 0;  // measured texts / the measured calls' time
  double tokens_per_s = 0;     // their tokens (after truncation, special tokens included) likewise
  int64_t sentences = 0, tokens = 0;
  double wall_s = 0;
  int64_t failures = 0;     // measured calls that failed
  std::string first_error;  // the first failure's error
};

// One call: the texts' tokens, or what failed (a server's error; a local run throws instead).
struct EmbedCall {
  int64_t tokens = 0;
  std::string error;
};
using EmbedBatch = std::function<EmbedCall(const std::vector<std::string>& texts)>;

// Call i embeds the `batch` texts from (i * batch) on, going round `texts`, through `embed`.
// Throws Error(kUsage) when there are no texts.
EmbedBenchResults run_embed_bench(const EmbedBatch& embed, const std::vector<std::string>& texts,
                                  const EmbedBenchOptions& options);
// The same through `encoder`, in this process.
EmbedBenchResults run_embed_bench(SentenceEncoder& encoder, const std::vector<std::string>& texts,
                                  const EmbedBenchOptions& options);

}  // namespace canrun
