#include "models/moe_common.h"

#include <algorithm>

#include "models/families_common.h"

namespace canrun {

MoeSpec read_moe(const ConfigReader& config, const DecoderSpec& spec, const MoeKeys& keys) {
  MoeSpec moe;
  const bool use_alias = keys.num_experts_alias != nullptr && !config.has(keys.num_experts) &&
                         config.has(keys.num_experts_alias);
  moe.num_experts =
      config.integer(use_alias ? keys.num_experts_alias : keys.num_experts, keys.default_experts, 0, 1 << 16);
  moe.top_k = config.integer("num_experts_per_tok", keys.default_top_k, 1, 1 << 16);
  if (moe.num_experts > 0 && moe.top_k > moe.num_experts)
    config.reject("num_experts_per_tok", "must not exceed the number of experts (" +
                                             std::to_string(moe.num_experts) + ")");
  moe.expert_ffn = keys.expert_ffn == nullptr
                       ? spec.intermediate_size
                       : config.integer(keys.expert_ffn, keys.default_expert_ffn, 1, int64_t{1} << 20);
  moe.normalize_top_k = keys.always_normalize ? *keys.always_normalize
                                              : config.boolean("norm_topk_prob", keys.default_normalize);
  return moe;
}

void read_noaux_tc_experts(const ConfigReader& config, DecoderSpec& spec, const NoauxRouterDefaults& defaults) {
  MoeKeys keys;
  keys.num_experts = "n_routed_experts";
  keys.num_experts_alias = "num_local_experts";
  keys.default_experts = defaults.experts;
  keys.default_top_k = defaults.top_k;
  keys.default_expert_ffn = defaults.expert_ffn;
  keys.default_normalize = true;
  spec.moe = read_moe(config, spec, keys);
  if (spec.moe.num_experts < 1) config.reject("n_routed_experts", "must be at least 1");
  spec.moe.sigmoid_scores = true;
  spec.moe.routed_scale = static_cast<float>(config.number("routed_scaling_factor", defaults.routed_scale));
  spec.moe.shared_ffn = spec.moe.expert_ffn * config.integer("n_shared_experts", 1, 0, 1024);
  spec.moe.groups = config.integer("n_group", defaults.groups, 1, spec.moe.num_experts);
  if (spec.moe.num_experts % spec.moe.groups != 0)
    config.reject("n_group", "must divide n_routed_experts (" + std::to_string(spec.moe.num_experts) + ")");
  spec.moe.top_k_groups = config.integer("topk_group", defaults.top_k_groups, 1, spec.moe.groups);
  if (spec.moe.top_k > spec.moe.top_k_groups * (spec.moe.num_experts / spec.moe.groups))
    config.reject("num_experts_per_tok", "must not exceed the experts of the topk_group kept groups");
}

std::vector<bool> sparse_from(const ConfigReader& config, int64_t num_layers, int64_t first_sparse_default) {
  const int64_t first_sparse = config.integer("first_k_dense_replace", first_sparse_default, 0, 1 << 20);
  std::vector<bool> layers(static_cast<size_t>(num_layers), false);
  for (int64_t i = first_sparse; i < num_layers; ++i) layers[i] = true;
  return layers;
}

std::vector<bool> mlp_layer_types(const ConfigReader& config, int64_t num_layers, int64_t dense) {
  std::vector<bool> layers(static_cast<size_t>(num_layers), true);
  if (!config.has("mlp_layer_types")) {
    std::fill_n(layers.begin(), std::min(dense, num_layers), false);
    return layers;
  }
  const std::vector<std::string> types = read_layer_list(config, "mlp_layer_types", num_layers, {"dense", "sparse"});
  for (int64_t i = 0; i < num_layers; ++i) layers[i] = types[static_cast<size_t>(i)] == "sparse";
  return layers;
}

void use_mixtral_expert_names(WeightNames& names) {
  names.router = "block_sparse_moe.gate";
  names.experts = "block_sparse_moe.experts";
  names.expert_gate = "w1";
  names.expert_up = "w3";
  names.expert_down = "w2";
}

}  // namespace canrun
