// Config reading shared by the Llama-style families (llama, mistral, qwen2, qwen3):
// one decoder layout whose differences are defaults and switches.
#pragma once

#include <cstdint>
#include <optional>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

// A family's transformers config defaults, used where config.json omits a field.
struct LlamaLikeDefaults {
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_layers = 32;
  int64_t num_heads = 32;
  std::optional<int64_t> num_kv_heads;  // none: equal to num_heads
  std::optional<int64_t> head_dim;      // none: hidden_size / num_heads
  int64_t max_positions = 2048;
  double norm_eps = 1e-6;
  double rope_theta = 10000.0;
};

DecoderSpec read_llama_like_spec(const ConfigReader& config, const LlamaLikeDefaults& defaults);

// Per-layer windows from an explicit "layer_types" list, or else from Qwen-style
// use_sliding_window / sliding_window / max_window_layers.
std::vector<int64_t> read_qwen_style_windows(const ConfigReader& config, int64_t num_layers);

}  // namespace canrun
