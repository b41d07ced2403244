// Llama 4's text model (llama4_text; the language model of Llama-4-Scout and Maverick): GQA
// attention rotated in interleaved pairs on three layers of four, the fourth without positions
// but with attention temperature tuning; the rotated layers attend within chunks of
// attention_chunk_size and L2-normalise q and k per head. Feed-forward: routed experts (top-k of
// the router logits, each expert's input scaled by sigmoid of its logit, 3-D gate_up_proj and
// down_proj) plus a shared SwiGLU expert on the moe_layers, a wider SwiGLU on the others.
#include <string>
#include <vector>

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

// no_rope_layers: 1 where the layer rotates, 0 where it has no positions; by default every
// no_rope_layer_interval-th layer has none.
std::vector<bool> rope_layers(const ConfigReader& config, int64_t num_layers) {
  std::vector<bool> layers(static_cast<size_t>(num_layers));
  if (config.has("no_rope_layers") && !config.json()["no_rope_layers"].empty()) {
    const Json& list = config.json()["no_rope_layers"];
    if (!list.is_array() || static_cast<int64_t>(list.size()) != num_layers)
      config.reject("no_rope_layers", "must list 0 or 1 for each of the " + std::to_string(num_layers) + " layers");
    for (int64_t i = 0; i < num_layers; ++i) {
      const Json& entry = list[static_cast<size_t>(i)];
      if (!entry.is_number_integer() || (entry.get<int64_t>() != 0 && entry.get<int64_t>() != 1))
        config.reject("no_rope_layers", "entry " + std::to_string(i) + " must be 0 or 1");
      layers[i] = entry.get<int64_t>() == 1;
    }
    return layers;
  }
  const int64_t interval = config.integer("no_rope_layer_interval", 4, 1, 1 << 20);
  for (int64_t i = 0; i < num_layers; ++i) layers[i] = (i + 1) % interval != 0;
  return layers;
}

// moe_layers (layer indices), else every interleave_moe_layer_step-th layer from step - 1 on.
std::vector<bool> moe_layers(const ConfigReader& config, int64_t num_layers) {
  std::vector<bool> layers(static_cast<size_t>(num_layers), false);
  if (config.has("moe_layers")) {
    const Json& list = config.json()["moe_layers"];
    const std::string bound = "must be a list of layer indices below " + std::to_string(num_layers);
    if (!list.is_array()) config.reject("moe_layers", bound);
    for (const Json& index : list) {
      if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= num_layers)
        config.reject("moe_layers", bound);
      layers[static_cast<size_t>(index.get<int64_t>())] = true;
    }
    return layers;
  }
  const int64_t step = config.integer("interleave_moe_layer_step", 1, 1, 1 << 20);
  for (int64_t i = step - 1; i < num_layers; i += step) layers[i] = true;
  return layers;
}

// Per layer, the chunk of a chunked_attention layer (layer_types; by default the rotated ones).
std::vector<int64_t> attention_chunks(const ConfigReader& config, const std::vector<bool>& rotated) {
  const int64_t num_layers = static_cast<int64_t>(rotated.size());
  const int64_t chunk = config.has("attention_chunk_size")
                            ? config.integer("attention_chunk_size", std::nullopt, 1, int64_t{1} << 30)
                        : config.json().contains("attention_chunk_size") ? 0  // null: no chunks
                                                                          : 8192;
  std::vector<int64_t> chunks(static_cast<size_t>(num_layers), 0);
  if (config.has("layer_types")) {
    const std::vector<std::string> types =
        read_layer_list(config, "layer_types", num_layers, {"chunked_attention", "full_attention"});
    for (int64_t i = 0; i < num_layers; ++i)
      if (types[static_cast<size_t>(i)] == "chunked_attention") chunks[i] = chunk;
    return chunks;
  }
  for (int64_t i = 0; i < num_layers; ++i)
    if (rotated[static_cast<size_t>(i)]) chunks[i] = chunk;
  return chunks;
}

DecoderSpec read_llama4_text(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 202048;
  defaults.hidden_size = 5120;
  defaults.intermediate_size = 8192;
  defaults.num_layers = 48;
  defaults.num_heads = 40;
  defaults.num_kv_heads = 8;
  defaults.head_dim = 128;
  defaults.max_positions = 4096 * 32;
  defaults.norm_eps = 1e-5;
  defaults.rope_theta = 500000.0;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = spec.o_bias = config.boolean("attention_bias", false);
  spec.rope_interleaved = true;
  spec.rope_layers = rope_layers(config, spec.num_layers);
  if (config.boolean("use_qk_norm", true)) {
    spec.qk_norm = true;
    spec.qk_norm_kind = QkNorm::kPerHead;
    spec.qk_norm_weights = QkNormWeights::kNone;
    spec.qk_norm_layers = spec.rope_layers;
  }
  if (config.boolean("attn_temperature_tuning", true)) {
    spec.query_temperature.scale = static_cast<float>(config.number("attn_scale", 0.1));
    spec.query_temperature.floor = config.integer("floor_scale", 8192, 1, int64_t{1} << 30);
    spec.query_temperature.offset = 1;
    spec.query_temperature.layers_without_rope_only = true;
  }
  spec.attention_chunk = attention_chunks(config, spec.rope_layers);

  MoeKeys keys;
  keys.num_experts = "num_local_experts";
  keys.default_experts = 16;
  keys.default_top_k = 1;
  keys.expert_ffn = nullptr;  // the experts' width is intermediate_size
  keys.always_normalize = false;
  spec.moe = read_moe(config, spec, keys);
  spec.moe.sigmoid_scaled_input = true;
  spec.moe.stacked = MoeSpec::Stacked::kColumns;
  spec.moe.shared_ffn = spec.moe.expert_ffn;
  spec.moe_layers = moe_layers(config, spec.num_layers);
  // The dense layers' SwiGLU is the wider one.
  spec.intermediate_size = config.integer("intermediate_size_mlp", 16384, 1, int64_t{1} << 20);

  WeightNames& n = spec.names;
  n.gate = "feed_forward.gate_proj";
  n.up = "feed_forward.up_proj";
  n.down = "feed_forward.down_proj";
  n.router = "feed_forward.router";
  n.experts = "feed_forward.experts";
  n.shared_expert = "feed_forward.shared_expert";
  return spec;
}

const ArchitectureRegistration kLlama4Text(
    {"llama4_text",
     "Llama 4 text: chunked attention with rope and L2 q/k norms, layers without rope with temperature tuning, "
     "sigmoid-scaled top-k experts plus a shared expert",
     read_llama4_text,
     {"no_rope_layers (or no_rope_layer_interval)", "layer_types chunked_attention|full_attention",
      "attention_chunk_size", "use_qk_norm", "attn_temperature_tuning, attn_scale, floor_scale",
      "num_local_experts, num_experts_per_tok, intermediate_size, intermediate_size_mlp",
      "moe_layers (or interleave_moe_layer_step)", "attention_bias", "rope default|linear|dynamic|yarn|llama3"},
     {"Llama4ForCausalLM"}});

}  // namespace
}  // namespace canrun
