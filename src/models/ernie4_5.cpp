// ERNIE 4.5: the Llama layout rotated in interleaved pairs, with biases on every projection
// when use_bias, tied embeddings by default; ernie4_5_moe adds routed experts (softmax scores,
// chosen with moe_statics' score bias, renormalised) beside shared experts on the layers that
// moe_layer_start_index, moe_layer_end_index and moe_layer_interval name.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_ernie4_5(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 103424;
  defaults.hidden_size = 1024;
  defaults.intermediate_size = 3072;
  defaults.num_layers = 18;
  defaults.num_heads = 16;
  defaults.num_kv_heads = 2;
  defaults.head_dim = 128;
  defaults.max_positions = 131072;
  defaults.norm_eps = 1e-5;
  defaults.rope_theta = 500000.0;
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.rope_interleaved = true;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = config.boolean("use_bias", false);
  return spec;
}

DecoderSpec read_ernie4_5_moe(const ConfigReader& config) {
  DecoderSpec spec = read_ernie4_5(config);
  MoeSpec& moe = spec.moe;
  moe.num_experts = config.integer("moe_num_experts", 64, 1, 1 << 16);
  moe.top_k = config.integer("moe_k", 6, 1, 1 << 16);
  if (moe.top_k > moe.num_experts)
    config.reject("moe_k", "must not exceed moe_num_experts (" + std::to_string(moe.num_experts) + ")");
  moe.expert_ffn = config.integer("moe_intermediate_size", 1536, 1, int64_t{1} << 20);
  moe.shared_ffn = moe.expert_ffn * config.integer("moe_num_shared_experts", 2, 0, 1 << 10);
  moe.normalize_top_k = true;
  moe.softmax_score_bias = true;
  moe.normalize_floor = static_cast<float>(config.number("moe_norm_min", 1e-12));
  spec.names.shared_expert = "mlp.shared_experts";
  spec.names.score_bias = "mlp.moe_statics.e_score_correction_bias";
  const int64_t last = spec.num_layers - 1;
  const int64_t start = config.integer("moe_layer_start_index", 1, 0, last);
  const int64_t end_field = config.integer("moe_layer_end_index", -1, -1, last);
  const int64_t end = end_field == -1 ? last : end_field;
  const int64_t interval = config.integer("moe_layer_interval", 1, 1, 1 << 20);
  spec.moe_layers.resize(static_cast<size_t>(spec.num_layers));
  for (int64_t i = 0; i < spec.num_layers; ++i) spec.moe_layers[i] = (i + 1) % interval == 0 && i >= start && i <= end;
  return spec;
}

const ArchitectureRegistration kErnie4_5Moe(
    {"ernie4_5_moe",
     "ERNIE 4.5 MoE: ernie4_5's layers, softmax-routed experts chosen with a score bias, shared experts",
     read_ernie4_5_moe,
     {"use_bias", "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3", "moe_num_experts", "moe_k",
      "moe_intermediate_size", "moe_num_shared_experts", "moe_layer_start_index", "moe_layer_end_index",
      "moe_layer_interval", "moe_norm_min"},
     {"Ernie4_5_MoeForCausalLM"}});

const ArchitectureRegistration kErnie4_5({"ernie4_5", "ERNIE 4.5: Llama layout, rotary in interleaved pairs, use_bias",
                                          read_ernie4_5,
                                          {"use_bias", "tie_word_embeddings",
                                           "rope default|linear|dynamic|yarn|llama3"},
                                          {"Ernie4_5ForCausalLM"}});

}  // namespace
}  // namespace canrun
