// Small helpers the family files share on top of llama_like.h.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

// sliding_window: null means full attention (0), absent means `fallback`.
int64_t sliding_window_or_null(const ConfigReader& config, int64_t fallback);

// The Mistral convention: one window on every layer, sliding_window_or_null(config, fallback).
std::vector<int64_t> uniform_windows(const ConfigReader& config, int64_t num_layers, int64_t fallback);

// q/k/v/o biases per attention_bias (default off) and a q/k norm of `kind` (qwen3, olmo2,
// olmoe, apertus, hunyuan_v1_dense).
void apply_biased_qk_norm_attention(const ConfigReader& config, DecoderSpec& spec, QkNorm kind);

// Qwen3's attention (qwen3, qwen3_moe): q/k/v/o biases per attention_bias, an RMSNorm over
// each head of q and k, Qwen-style sliding windows.
void apply_qwen3_attention(const ConfigReader& config, DecoderSpec& spec);

// Qwen-MoE style: layer i is sparse unless listed in mlp_only_layers, when (i + 1) is a
// multiple of decoder_sparse_step.
std::vector<bool> sparse_layers(const ConfigReader& config, int64_t num_layers, int64_t num_experts);

// A per-layer list of names (layer_types, mlp_layer_types): one of `allowed` for each of the
// num_layers layers. Errors name the field, the entry and the allowed names.
std::vector<std::string> read_layer_list(const ConfigReader& config, const std::string& key, int64_t num_layers,
                                         const std::vector<std::string>& allowed);

// The rotary positions of full- and sliding-attention layers (spec.rope, spec.local_rope,
// use_local_rope): rope_parameters keyed by layer type ("full_attention", "sliding_attention"),
// else the top-level rope fields for the full layers and `local`'s for the sliding ones. The
// full layers' heads are `full_head_dim` wide (0: spec.head_dim, as the sliding layers').
void read_layer_type_ropes(const ConfigReader& config, DecoderSpec& spec, const RopeDefaults& global,
                           const RopeDefaults& local, int64_t full_head_dim = 0);

// The Mamba-2 layers' mamba_* fields and time_step_limit (granitemoehybrid, falcon_h1), for a
// Mamba width (heads x head dim) of `inner`. Errors name the field.
void read_mamba(const ConfigReader& config, DecoderSpec& spec, int64_t inner);

// An unsupported config option: "config.json: field 'F': VALUE is not supported for TYPE (why)".
[[noreturn]] void reject_option(const ConfigReader& config, const std::string& field, const std::string& value,
                                const std::string& model_type, const std::string& why);

}  // namespace canrun
