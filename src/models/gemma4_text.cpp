// Gemma 4 (text): Gemma 3's layout of norms before and after both blocks, with plain-weight
// RMSNorms, attention scale 1, per-head q/k norms and a weightless norm of each value head.
// The full-attention layers have wider heads (global_head_dim), proportional rope (a quarter of
// the pairs rotate) and, with attention_k_eq_v, their own kv head count and no v_proj: the keys
// as projected serve as values. With enable_moe_block, routed experts beside the dense MLP
// (26B-A4B). E2B and E4B: per-layer inputs after each MLP, and the last num_kv_shared_layers
// attend to an earlier layer's cached keys and values, with double-wide MLPs. Every layer ends
// by scaling the residual stream by its layer_scalar.
#include <cmath>
#include <exception>
#include <string>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

// Each layer's head_dim and kv heads: transformers writes them per layer in per_layer_config
// ({"<layer>": {"head_dim": .., "num_key_value_heads": ..}}); the Hub's configs give the full
// layers' as global_head_dim and, with attention_k_eq_v, num_global_key_value_heads.
void read_layer_shapes(const ConfigReader& config, DecoderSpec& spec) {
  const size_t layers = static_cast<size_t>(spec.num_layers);
  spec.layer_head_dims.assign(layers, spec.head_dim);
  spec.layer_kv_heads.assign(layers, spec.num_kv_heads);
  if (config.has("per_layer_config")) {
    const ConfigReader per_layer = config.object("per_layer_config");
    for (const auto& [key, value] : per_layer.json().items()) {
      size_t used = 0;
      int64_t layer = -1;
      try {
        layer = std::stoll(key, &used);
      } catch (const std::exception&) {
      }
      if (used != key.size() || layer < 0 || layer >= spec.num_layers)
        per_layer.reject(key, "must name a layer index below num_hidden_layers (" +
                                  std::to_string(spec.num_layers) + ")");
      const ConfigReader entry = per_layer.object(key);
      for (const auto& [field, ignored] : entry.json().items())
        if (field != "head_dim" && field != "num_key_value_heads")
          entry.reject(field, "is not a per-layer setting canrun reads (head_dim, num_key_value_heads)");
      spec.layer_head_dims[layer] = entry.integer("head_dim", spec.head_dim, 2, 1 << 16);
      spec.layer_kv_heads[layer] = entry.integer("num_key_value_heads", spec.num_kv_heads, 1, spec.num_heads);
    }
  } else {
    const int64_t global_head_dim = config.integer("global_head_dim", 512, 2, 1 << 16);
    const bool k_eq_v = config.boolean("attention_k_eq_v", false);
    const int64_t global_kv_heads = k_eq_v && config.has("num_global_key_value_heads")
                                        ? config.integer("num_global_key_value_heads", std::nullopt, 1, spec.num_heads)
                                        : spec.num_kv_heads;
    for (size_t i = 0; i < layers; ++i) {
      if (spec.sliding_window[i] > 0) continue;
      spec.layer_head_dims[i] = global_head_dim;
      spec.layer_kv_heads[i] = global_kv_heads;
    }
  }
  // One rope table per layer type: the layers of a type share their head width.
  for (size_t i = 0; i < layers; ++i)
    if (spec.layer_head_dims[i] != (spec.sliding_window[i] > 0 ? spec.head_dim : spec.layer_head_dims.back()))
      config.reject("per_layer_config", "layer " + std::to_string(i) + " has head_dim " +
                                            std::to_string(spec.layer_head_dims[i]) +
                                            "; every layer of one type must have the same");
  for (size_t i = 0; i < layers; ++i)
    if (spec.num_heads % spec.layer_kv_heads[i] != 0)
      config.reject("num_key_value_heads", "must divide num_attention_heads on every layer (layer " +
                                               std::to_string(i) + " has " + std::to_string(spec.layer_kv_heads[i]) +
                                               ")");
}

// enable_moe_block (26B-A4B): on every layer, routed experts beside the dense MLP. The router
// reads the residual stream (RMSNorm without weight, times router.scale / sqrt(hidden)), takes
// the softmax, the top_k_experts renormalised, each times its router.per_expert_scale; the
// experts are 3-D [gate; up] and down tensors.
void read_experts(const ConfigReader& config, DecoderSpec& spec) {
  MoeSpec& moe = spec.moe;
  moe.num_experts = config.integer("num_experts", std::nullopt, 1, 1 << 16);
  moe.top_k = config.integer("top_k_experts", std::nullopt, 1, moe.num_experts);
  moe.expert_ffn = config.integer("moe_intermediate_size", std::nullopt, 1, 1 << 20);
  moe.normalize_top_k = true;
  moe.stacked = MoeSpec::Stacked::kRows;
  moe.router_input_norm = true;
  moe.per_expert_scale = true;
  spec.experts_beside_mlp = true;
  WeightNames& n = spec.names;
  n.router = "router.proj";
  n.experts = "experts";
  n.post_mlp_alone_norm = "post_feedforward_layernorm_1";
  n.experts_norm = "pre_feedforward_layernorm_2";
  n.post_experts_norm = "post_feedforward_layernorm_2";
}

// num_kv_shared_layers: the last layers project no keys or values; each attends to the cache of
// the last earlier layer of its own type. With use_double_wide_mlp their MLPs are twice as wide.
void read_kv_sharing(const ConfigReader& config, DecoderSpec& spec) {
  const int64_t shared = config.integer("num_kv_shared_layers", 0, 0, spec.num_layers - 1);
  if (shared == 0) return;
  const int64_t first_shared = spec.num_layers - shared;
  const bool double_wide = config.boolean("use_double_wide_mlp", false);
  spec.kv_source_layers.assign(static_cast<size_t>(spec.num_layers), -1);
  spec.layer_ffn.assign(static_cast<size_t>(spec.num_layers), spec.intermediate_size);
  const auto sliding = [&](int64_t layer) { return spec.sliding_window[static_cast<size_t>(layer)] > 0; };
  for (int64_t i = first_shared; i < spec.num_layers; ++i) {
    int64_t source = first_shared - 1;
    while (source >= 0 && sliding(source) != sliding(i)) --source;
    if (source < 0)
      config.reject("num_kv_shared_layers", "layer " + std::to_string(i) + " would reuse the keys of an earlier " +
                                                (sliding(i) ? "sliding" : "full") + " layer, and the first " +
                                                std::to_string(first_shared) + " layers have none");
    spec.kv_source_layers[i] = source;
    if (double_wide) spec.layer_ffn[i] = 2 * spec.intermediate_size;
  }
}

DecoderSpec read_gemma4_text(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 262144;
  defaults.hidden_size = 2304;
  defaults.intermediate_size = 9216;
  defaults.num_layers = 30;
  defaults.num_heads = 8;
  defaults.num_kv_heads = 4;
  defaults.head_dim = 256;
  defaults.max_positions = 131072;
  defaults.activation = "gelu_pytorch_tanh";
  defaults.activation_key = "hidden_activation";
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);

  // Absent: transformers' default, 256; null: none.
  const bool null_per_layer_input =
      config.json().contains("hidden_size_per_layer_input") && !config.has("hidden_size_per_layer_input");
  spec.per_layer_input_dim = null_per_layer_input ? 0 : config.integer("hidden_size_per_layer_input", 256, 0, 1 << 20);
  if (spec.per_layer_input_dim > 0)
    spec.per_layer_vocab = config.integer("vocab_size_per_layer_input", 262144, 1, int64_t{1} << 24);
  if (config.has("use_bidirectional_attention")) {
    const std::string mode = config.string("use_bidirectional_attention", std::nullopt);
    if (mode != "vision")  // "vision": image tokens see each other; text stays causal
      reject_option(config, "use_bidirectional_attention", mode, spec.model_type, "causal text attention only");
  }

  spec.norm = rms_norm(spec.norm_eps);
  spec.qk_norm_spec = spec.norm;
  spec.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(spec.hidden_size)));
  spec.qkv_bias = spec.o_bias = config.boolean("attention_bias", false);
  spec.names.post_attn_norm = "post_attention_layernorm";
  spec.names.mlp_norm = "pre_feedforward_layernorm";
  spec.names.post_mlp_norm = "post_feedforward_layernorm";
  spec.names.layer_scalar = "layer_scalar";
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kPerHead;
  spec.value_norm = true;
  spec.attention_scale = 1.0f;
  if (config.has("final_logit_softcapping")) {
    spec.final_softcap = static_cast<float>(config.number("final_logit_softcapping", std::nullopt));
    if (spec.final_softcap <= 0) config.reject("final_logit_softcapping", "must be positive (or null: none)");
  }

  const int64_t window = config.integer("sliding_window", 512, 1, int64_t{1} << 30);
  spec.sliding_window = read_layer_type_windows(config, spec.num_layers, window,
                                                [](int64_t i) { return (i + 1) % 6 != 0; });
  spec.sliding_window.back() = 0;  // transformers forces the last layer to full attention
  read_layer_shapes(config, spec);
  read_kv_sharing(config, spec);
  spec.keys_as_values.assign(static_cast<size_t>(spec.num_layers), false);
  if (config.boolean("attention_k_eq_v", false))
    for (size_t i = 0; i < spec.keys_as_values.size(); ++i) spec.keys_as_values[i] = spec.sliding_window[i] == 0;

  if (config.boolean("enable_moe_block", false)) read_experts(config, spec);

  // Without rope_parameters transformers takes its defaults (a top-level rope_theta is ignored).
  Json with_ropes = config.json();
  if (!config.has("rope_parameters"))
    with_ropes["rope_parameters"] = {
        {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
        {"full_attention", {{"rope_type", "proportional"}, {"partial_rotary_factor", 0.25}, {"rope_theta", 1e6}}}};
  RopeDefaults ropes;
  ropes.max_positions = spec.max_positions;
  read_layer_type_ropes(ConfigReader(with_ropes, config.path()), spec, ropes, ropes,
                        spec.layer_head_dims.back());  // the last layer is a full one
  return spec;
}

const ArchitectureRegistration kGemma4Text(
    {"gemma4_text",
     "Gemma 4 text: wider full-attention heads with proportional rope, keys as values, value norms, layer "
     "scalars, experts beside the MLP, per-layer inputs, keys and values shared across layers",
     read_gemma4_text,
     {"layer_types", "sliding_window", "global_head_dim", "num_global_key_value_heads", "attention_k_eq_v",
      "per_layer_config head_dim|num_key_value_heads", "rope_parameters per layer type (proportional)",
      "enable_moe_block", "num_experts", "top_k_experts", "moe_intermediate_size", "hidden_size_per_layer_input",
      "vocab_size_per_layer_input", "num_kv_shared_layers", "use_double_wide_mlp", "final_logit_softcapping",
      "attention_bias", "tie_word_embeddings"},
     {"Gemma4ForCausalLM"}});

}  // namespace
}  // namespace canrun
