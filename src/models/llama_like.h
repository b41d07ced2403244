// Config reading shared by the families built on the Llama layout (llama, mistral, qwen2,
// qwen3, phi3, gemma, granite, ...): one decoder layout whose differences are defaults and
// switches, plus helpers every family file uses (activations, per-layer windows, MoE).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

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
  std::string norm_eps_key = "rms_norm_eps";
  double rope_theta = 10000.0;
  double partial_rotary_factor = 1.0;
  std::string activation = "silu";
  std::string activation_key = "hidden_act";
  bool tie_embeddings = false;
  // Families whose attention reads config.head_dim only as hidden_size / num_heads (phi3...).
  bool head_dim_from_config = true;
};

DecoderSpec read_llama_like_spec(const ConfigReader& config, const LlamaLikeDefaults& defaults);

// hidden_act names transformers' ACT2FN maps to the activations canrun has.
Activation read_activation(const ConfigReader& config, const std::string& key, const std::string& fallback,
                           const std::string& model_type);

// Per-layer windows from an explicit "layer_types" list, or else from Qwen-style
// use_sliding_window / sliding_window / max_window_layers.
std::vector<int64_t> read_qwen_style_windows(const ConfigReader& config, int64_t num_layers);

// Per-layer windows from "layer_types" (sliding_attention gets `window`), or from a default
// pattern: layer i slides when pattern(i).
std::vector<int64_t> read_layer_type_windows(const ConfigReader& config, int64_t num_layers, int64_t window,
                                             const std::function<bool(int64_t)>& default_sliding);

// quantization_config: none; quant_method fp8 (E4M3 weights, a scale per weight_block_size
// block, dynamic activation scaling), which sets spec.fp8; or quant_method compressed-tensors
// or gptq with packed symmetric int4/int8 weights, which sets spec.packed_int. Any other method
// or option is refused by name.
void read_quantization(const ConfigReader& config, DecoderSpec& spec);

// Norm settings for the whole model.
NormSpec rms_norm(float eps, bool unit_offset = false);
NormSpec layer_norm(float eps, bool bias = true);

}  // namespace canrun
