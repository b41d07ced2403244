// LFM2 (Liquid): a hybrid stack of short gated convolution layers and GQA attention layers with
// per-head q/k RMSNorm, each followed by a SwiGLU MLP (w1 gate, w3 up, w2 down) whose width
// transformers adjusts from the config; the final norm is "embedding_norm".
#include <cmath>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

// Lfm2MLP's width: with block_auto_adjust_ff_dim, 2/3 of it, times block_ffn_dim_multiplier
// and rounded up to block_multiple_of when a multiplier is given.
int64_t mlp_width(const ConfigReader& config, int64_t width) {
  if (!config.boolean("block_auto_adjust_ff_dim", true)) return width;
  width = static_cast<int64_t>(2.0 * static_cast<double>(width) / 3.0);
  if (!config.has("block_ffn_dim_multiplier") && config.json().contains("block_ffn_dim_multiplier")) return width;
  const double multiplier = config.number("block_ffn_dim_multiplier", 1.0);
  if (multiplier <= 0) config.reject("block_ffn_dim_multiplier", "must be positive");
  const int64_t multiple = config.integer("block_multiple_of", 256, 1, int64_t{1} << 20);
  width = static_cast<int64_t>(multiplier * static_cast<double>(width));
  return multiple * ((width + multiple - 1) / multiple);
}

// "conv" or "attention" per layer: layer_types, else full_attn_idxs (the attention layers), else
// attention everywhere.
std::vector<std::string> mixer_kinds(const ConfigReader& config, int64_t num_layers) {
  std::vector<std::string> kinds(static_cast<size_t>(num_layers), "attention");
  if (config.has("layer_types")) {
    const std::vector<std::string> types =
        read_layer_list(config, "layer_types", num_layers, {"conv", "full_attention"});
    for (int64_t i = 0; i < num_layers; ++i)
      if (types[static_cast<size_t>(i)] == "conv") kinds[i] = "short_conv";
  } else if (config.has("full_attn_idxs")) {
    const Json& indices = config.json()["full_attn_idxs"];
    const std::string bound = "must be a list of layer indices below " + std::to_string(num_layers);
    if (!indices.is_array()) config.reject("full_attn_idxs", bound);
    std::fill(kinds.begin(), kinds.end(), "short_conv");
    for (const Json& index : indices) {
      if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= num_layers)
        config.reject("full_attn_idxs", bound);
      kinds[static_cast<size_t>(index.get<int64_t>())] = "attention";
    }
  }
  return kinds;
}

DecoderSpec read_lfm2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 65536;
  defaults.hidden_size = 2560;
  defaults.intermediate_size = 12288;
  defaults.num_layers = 32;
  defaults.num_heads = 32;
  defaults.num_kv_heads = 8;
  defaults.max_positions = 128000;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "norm_eps";
  defaults.rope_theta = 1000000.0;
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  // transformers' aliases: tie_embedding and block_ff_dim win over the standard names.
  if (config.has("tie_embedding")) spec.tie_embeddings = config.boolean("tie_embedding", true);
  const int64_t width = config.has("block_ff_dim") ? config.integer("block_ff_dim", std::nullopt, 1, int64_t{1} << 20)
                                                   : spec.intermediate_size;
  spec.intermediate_size = mlp_width(config, width);
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kPerHead;
  spec.conv.kernel = config.integer("conv_L_cache", 3, 1, 1024);
  spec.conv.bias = config.boolean("conv_bias", false);
  spec.mixer_kinds = mixer_kinds(config, spec.num_layers);
  spec.ffn_kinds.assign(static_cast<size_t>(spec.num_layers), "dense_mlp");
  WeightNames& n = spec.names;
  n.attn_norm = "operator_norm";
  n.mlp_norm = "ffn_norm";
  n.final_norm = "model.embedding_norm";
  n.o = "self_attn.out_proj";
  n.q_norm = "self_attn.q_layernorm";
  n.k_norm = "self_attn.k_layernorm";
  n.gate = "feed_forward.w1";
  n.up = "feed_forward.w3";
  n.down = "feed_forward.w2";
  return spec;
}

const ArchitectureRegistration kLfm2(
    {"lfm2", "LFM2: short gated convolution layers between GQA attention layers (q/k RMSNorm per head)", read_lfm2,
     {"layer_types conv|full_attention (or full_attn_idxs)", "conv_L_cache", "conv_bias",
      "block_ff_dim, block_auto_adjust_ff_dim, block_ffn_dim_multiplier, block_multiple_of",
      "tie_embedding", "rope default|linear|dynamic|yarn|llama3"},
     {"Lfm2ForCausalLM"}});

}  // namespace
}  // namespace canrun
