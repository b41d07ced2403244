// sentence-transformers' Pooling module: one vector per input from its tokens' hidden states, in
// each mode the folder's 1_Pooling/config.json names (several are concatenated in their order).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/json.h"

namespace canrun {

enum class PoolingMode { kCls, kMax, kMean, kMeanSqrtLen, kWeightedMean, kLastToken };

struct PoolingConfig {
  int64_t dimension = 0;  // the hidden states' width
  std::vector<PoolingMode> modes = {PoolingMode::kMean};
  bool include_prompt = true;  // false: a prompt's tokens take no part
};

// Reads a Pooling config as sentence-transformers does: "pooling_mode" (a name or a list of
// names), or the older "pooling_mode_*" flags (mean when none is set), "include_prompt",
// "embedding_dimension" / "word_embedding_dimension". Throws Error(kCheckpoint) naming `path`
// and the field for an unknown mode or flag, or a dimension other than `hidden`.
PoolingConfig read_pooling_config(const Json& json, const std::string& path, int64_t hidden);

std::string pooling_mode_name(PoolingMode mode);

// The pooled vector of one input: `hidden` holds its `tokens` rows of config.dimension floats;
// the first `prompt_tokens` of them are left out when the config excludes the prompt.
std::vector<float> pool(const PoolingConfig& config, std::span<const float> hidden, int64_t tokens,
                        int64_t prompt_tokens = 0);

}  // namespace canrun
