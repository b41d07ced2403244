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

// Mixtral's checkpoint layout: block_sparse_moe.gate, block_sparse_moe.experts.<e>.w1 (gate),
// w3 (up), w2 (down); also MiniMax-M2's.
void use_mixtral_expert_names(WeightNames& names);

}  // namespace canrun
