// canrun bench ENCODER_DIR --texts LINES.txt: an encoder's embedding speed, batches of texts
// embedded one call after another: sentences/s, tokens/s, the latency of a call (p50/p95); or
// a server's, with --endpoint.
#pragma once

#include <optional>
#include <string>

#include "bench/embed_bench.h"
#include "runtime/session.h"

namespace canrun {

struct EmbedBenchCommand {
  std::string model_dir;
  std::string texts;  // the file of texts, one per line
  std::string backend;
  SessionOptions session;
  EmbedBenchOptions bench;
  int threads = 0;
  std::optional<double> price_per_hour;
  bool json = false;
};

void run_embed_bench_command(const EmbedBenchCommand& command);

// canrun bench --endpoint URL --texts LINES.txt: the same batches as /v1/embeddings requests to a
// server (canrun serve on an encoder, TEI, vLLM...), one after another; failed requests are
// counted, and all of them failing is an error.
struct EndpointEmbedBenchCommand {
  std::string url;
  std::string served_model;  // empty: the first model the server's /v1/models lists
  std::string texts;
  EmbedBenchOptions bench;
  double timeout_s = 600;
  std::optional<double> price_per_hour;
  bool json = false;
};

void run_endpoint_embed_bench_command(const EndpointEmbedBenchCommand& command);

}  // namespace canrun
