// canrun bench ENCODER_DIR --texts LINES.txt: an encoder's embedding speed, batches of texts
// embedded one call after another: sentences/s, tokens/s, the latency of a call (p50/p95).
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

}  // namespace canrun
