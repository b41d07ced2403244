// generation_config.json: the token ids that start, stop and pad generation.
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
};

// Reads MODEL_DIR/generation_config.json; without it, falls back to the ids in
// config.json, as transformers does. Ids must lie in [0, vocab_size).
GenerationConfig read_generation_config(const std::string& model_dir, const Json& model_config,
                                        int64_t vocab_size);

}  // namespace canrun
