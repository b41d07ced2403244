// Qwen3.5's text model (qwen3_5_text) and Qwen3-Next (qwen3_next): a hybrid stack, three Gated DeltaNet layers to one
// full-attention layer by default (layer_types), each followed by a SwiGLU MLP, or in
// qwen3_5_moe_text by routed experts (softmax, top-k renormalised) and a sigmoid-gated shared
// expert. The attention
// layers gate their output by sigmoid of a second q_proj half, normalise q and k per head and
// rotate a quarter of each head; every RMSNorm but the DeltaNet's own is zero-centred (1 + w).
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"
#include "models/vision_language.h"

namespace canrun {
namespace {

// "linear_attention" | "full_attention" per layer, else every full_attention_interval-th layer
// full (default 4).
std::vector<std::string> hybrid_mixers(const ConfigReader& config, int64_t num_layers) {
  std::vector<std::string> kinds(static_cast<size_t>(num_layers), "gated_deltanet");
  if (!config.has("layer_types")) {
    const int64_t interval = config.integer("full_attention_interval", 4, 1, 1 << 20);
    for (int64_t i = 0; i < num_layers; ++i)
      if ((i + 1) % interval == 0) kinds[i] = "attention";
    return kinds;
  }
  const std::vector<std::string> types =
      read_layer_list(config, "layer_types", num_layers, {"linear_attention", "full_attention"});
  for (int64_t i = 0; i < num_layers; ++i)
    if (types[static_cast<size_t>(i)] == "full_attention") kinds[i] = "attention";
  return kinds;
}

LlamaLikeDefaults qwen3_5_sizes(int64_t hidden_size, int64_t intermediate_size, int64_t num_layers,
                                int64_t num_kv_heads) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 248320;
  defaults.hidden_size = hidden_size;
  defaults.intermediate_size = intermediate_size;
  defaults.num_layers = num_layers;
  defaults.num_heads = 16;
  defaults.num_kv_heads = num_kv_heads;
  defaults.head_dim = 256;
  defaults.max_positions = 32768;
  defaults.partial_rotary_factor = 0.25;
  return defaults;
}

DecoderSpec read_hybrid(const ConfigReader& config, const LlamaLikeDefaults& defaults) {
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.norm = rms_norm(spec.norm_eps, /*unit_offset=*/true);
  spec.qk_norm_spec = spec.norm;
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kPerHead;
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = spec.o_bias = attention_bias;
  spec.attention_output_gate = true;
  DeltaNetSpec& d = spec.deltanet;
  d.key_heads = config.integer("linear_num_key_heads", 16, 1, 4096);
  d.value_heads = config.integer("linear_num_value_heads", 32, 1, 4096);
  if (d.value_heads % d.key_heads != 0)
    config.reject("linear_num_value_heads", "must be a multiple of linear_num_key_heads (" +
                                                std::to_string(d.key_heads) + ")");
  d.key_dim = config.integer("linear_key_head_dim", 128, 1, 8192);
  d.value_dim = config.integer("linear_value_head_dim", 128, 1, 8192);
  d.conv_kernel = config.integer("linear_conv_kernel_dim", 4, 1, 1024);
  d.norm_eps = spec.norm_eps;
  spec.mixer_kinds = hybrid_mixers(config, spec.num_layers);
  return spec;
}

DecoderSpec read_qwen3_5_text(const ConfigReader& config) {
  DecoderSpec spec = read_hybrid(config, qwen3_5_sizes(4096, 12288, 32, 4));
  spec.ffn_kinds.assign(static_cast<size_t>(spec.num_layers), "dense_mlp");
  return spec;
}

DecoderSpec read_qwen3_5_moe_text(const ConfigReader& config) {
  DecoderSpec spec = read_hybrid(config, qwen3_5_sizes(2048, 512, 40, 2));
  MoeKeys keys;
  keys.default_experts = 256;
  keys.default_top_k = 8;
  keys.default_expert_ffn = 512;
  keys.always_normalize = true;
  spec.moe = read_moe(config, spec, keys);
  if (spec.moe.num_experts < 1) config.reject("num_experts", "must be at least 1");
  spec.moe.shared_ffn = config.integer("shared_expert_intermediate_size", 512, 1, int64_t{1} << 20);
  spec.moe.shared_expert_gate = true;
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), true);
  return spec;
}

// Qwen3-Next: the same hybrid layers (the DeltaNet's projections grouped per key head), routed
// experts with a gated shared expert on the sparse layers (decoder_sparse_step, mlp_only_layers).
DecoderSpec read_qwen3_next(const ConfigReader& config) {
  LlamaLikeDefaults defaults = qwen3_5_sizes(2048, 5632, 48, 2);
  defaults.vocab_size = 151936;
  DecoderSpec spec = read_hybrid(config, defaults);
  spec.deltanet.grouped_projections = true;
  MoeKeys keys;
  keys.default_experts = 512;
  keys.default_top_k = 10;
  keys.default_expert_ffn = 512;
  keys.default_normalize = true;
  spec.moe = read_moe(config, spec, keys);
  spec.moe.shared_ffn = config.integer("shared_expert_intermediate_size", 512, 1, int64_t{1} << 20);
  spec.moe.shared_expert_gate = true;
  spec.moe_layers = sparse_layers(config, spec.num_layers, spec.moe.num_experts);
  return spec;
}

const std::vector<std::string> kHybridOptions = {
    "layer_types linear_attention|full_attention (or full_attention_interval)", "linear_num_key_heads",
    "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
    "head_dim", "partial_rotary_factor", "attention_bias", "tie_word_embeddings",
    "rope default|linear|dynamic|yarn|llama3 (text positions: mrope_section has no effect)"};

const ArchitectureRegistration kQwen3_5Text(
    {"qwen3_5_text",
     "Qwen3.5 text: Gated DeltaNet layers between gated full-attention layers, zero-centred RMSNorms",
     read_qwen3_5_text, kHybridOptions, {"Qwen3_5ForCausalLM"}});

std::vector<std::string> moe_options() {
  std::vector<std::string> options = kHybridOptions;
  options.insert(options.end(), {"num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                 "shared_expert_intermediate_size"});
  return options;
}

const ArchitectureRegistration kQwen3Next(
    {"qwen3_next", "Qwen3-Next: qwen3_5_text's hybrid layers, routed experts with a gated shared expert",
     read_qwen3_next, [] {
       std::vector<std::string> options = moe_options();
       options.insert(options.end(), {"norm_topk_prob", "decoder_sparse_step", "mlp_only_layers"});
       return options;
     }(),
     {"Qwen3NextForCausalLM"}});

const ArchitectureRegistration kQwen3_5MoeText(
    {"qwen3_5_moe_text",
     "Qwen3.5-MoE text: qwen3_5_text's layers with routed experts and a gated shared expert on each",
     read_qwen3_5_moe_text, moe_options(), {"Qwen3_5MoeForCausalLM"}});

// Qwen3.5 and Qwen3.5-MoE as published (image-text-to-text): the text model under text_config,
// its rotary angles over interleaved M-RoPE sections, and Qwen3-VL's vision tower without DeepStack.
DecoderSpec read_qwen3_5(const ConfigReader& config) {
  return read_vision_language(config, {"qwen3_5", 248056, {11, 11, 10}, false}, read_qwen3_5_text);
}

DecoderSpec read_qwen3_5_moe(const ConfigReader& config) {
  return read_vision_language(config, {"qwen3_5_moe", 248056, {11, 11, 10}, false}, read_qwen3_5_moe_text);
}

const ArchitectureRegistration kQwen3_5(
    {"qwen3_5", "Qwen3.5: qwen3_5_text under M-RoPE, Qwen3-VL's vision tower without DeepStack", read_qwen3_5,
     [] {
       std::vector<std::string> options = kHybridOptions;
       options.back() = "rope default (mrope_section)";
       return options;
     }(),
     {"Qwen3_5ForConditionalGeneration"}});

const ArchitectureRegistration kQwen3_5Moe(
    {"qwen3_5_moe", "Qwen3.5-MoE: qwen3_5_moe_text under M-RoPE, Qwen3-VL's vision tower without DeepStack",
     read_qwen3_5_moe, moe_options(), {"Qwen3_5MoeForConditionalGeneration"}});

}  // namespace
}  // namespace canrun
