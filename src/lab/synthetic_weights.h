// Synthetic checkpoints: a catalog model's real config.json with random bf16 weights from a
// fixed seed, for checking that a model loads, fits and runs without downloading it. They say
// nothing about the quality of the text; rows made with them are marked weights=synthetic.
#pragma once

#include <cstdint>
#include <string>

#include "util/json.h"

namespace canrun {

inline constexpr uint64_t kSyntheticSeed = 20261130;

// $XDG_CACHE_HOME/canrun/synthetic, else ~/.cache/canrun/synthetic.
std::string synthetic_cache_dir();

// Writes config.json and model.safetensors (bf16, every tensor the architecture reads under
// its transformers name) into `dir`, unless `dir` already holds the checkpoint of this config
// and seed. Linear and embedding weights are uniform with standard deviation 0.02 (transformers'
// initializer_range), norm weights 1, biases 0. The same config and seed give the same bytes.
// The folder appears whole or not at all (built beside it, then renamed).
void make_synthetic_checkpoint(const Json& config, uint64_t seed, const std::string& dir);

}  // namespace canrun
