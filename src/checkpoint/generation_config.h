// generation_config.json: the token ids that start, stop and pad generation, and how its
// tokens are chosen (sampling).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace canrun {

struct GenerationConfig {
  std::vector<int32_t> eos_token_ids;  // generation stops at any of them
  std::optional<int32_t> bos_token_id;
  std::optional<int32_t> pad_token_id;
  // Sampling, with transformers' defaults where a field is absent.
  bool do_sample = false;
  double temperature = 1.0;
  int64_t top_k = 50;
  double top_p = 1.0;
  std::optional<double> min_p;
  double repetition_penalty = 1.0;
};

// Reads MODEL_DIR/generation_config.json; without it, falls back to the fields of config.json,
// as transformers does. Ids must lie in [0, vocab_size); the sampling fields in the ranges
// transformers accepts (temperature >= 0, top_k >= 0, top_p and min_p in [0, 1],
// repetition_penalty > 0). Whether a temperature of 0 can sample is for the caller to say.
GenerationConfig read_generation_config(const std::string& model_dir, const Json& model_config,
                                        int64_t vocab_size);

}  // namespace canrun
