// Reading a routed-experts MLP from a config, shared by the MoE families.
#pragma once

#include <optional>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

struct MoeKeys {
  const char* num_experts = "num_experts";
  const char* num_experts_alias = nullptr;  // transformers' attribute_map spelling (qwen3_moe saves num_local_experts)
  int64_t default_experts = 0;
  int64_t default_top_k = 0;
  const char* expert_ffn = "moe_intermediate_size";  // nullptr: the dense intermediate_size
  int64_t default_expert_ffn = 0;
  // nullopt: read "norm_topk_prob" with this default; else always this.
  std::optional<bool> always_normalize;
  bool default_normalize = false;
};

MoeSpec read_moe(const ConfigReader& config, const DecoderSpec& spec, const MoeKeys& keys);

// The config class's defaults for a noaux_tc router.
struct NoauxRouterDefaults {
  int64_t experts = 0, top_k = 0, expert_ffn = 0, groups = 0, top_k_groups = 0;
  double routed_scale = 1.0;
};

// DeepSeek-V3's routed experts (noaux_tc), as deepseek_v3, glm4_moe_lite, glm_moe_dsa and
// nemotron_h configure them: n_routed_experts (alias num_local_experts) chosen by sigmoid scores
// plus e_score_correction_bias among the topk_group best of n_group groups, renormalised per
// norm_topk_prob, scaled by routed_scaling_factor; n_shared_experts shared experts of the
// experts' width.
void read_noaux_tc_experts(const ConfigReader& config, DecoderSpec& spec, const NoauxRouterDefaults& defaults);

// Layers from first_k_dense_replace on have routed experts (deepseek_v2, deepseek_v3, glm4_moe).
std::vector<bool> sparse_from(const ConfigReader& config, int64_t num_layers, int64_t first_sparse_default);

// mlp_layer_types ("dense" | "sparse" per layer), or when absent the first `dense` layers dense
// and the rest sparse (glm4_moe_lite, glm_moe_dsa, mimo_v2_flash).
std::vector<bool> mlp_layer_types(const ConfigReader& config, int64_t num_layers, int64_t dense);

// Mixtral's checkpoint layout: block_sparse_moe.gate, block_sparse_moe.experts.<e>.w1 (gate),
// w3 (up), w2 (down); also MiniMax-M2's.
void use_mixtral_expert_names(WeightNames& names);

}  // namespace canrun
