#include "models/moe_common.h"

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

void use_mixtral_expert_names(WeightNames& names) {
  names.router = "block_sparse_moe.gate";
  names.experts = "block_sparse_moe.experts";
  names.expert_gate = "w1";
  names.expert_up = "w3";
  names.expert_down = "w2";
}

}  // namespace canrun
