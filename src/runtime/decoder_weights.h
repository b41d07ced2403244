// The weights of a decoder-only transformer, named and shaped from its spec: linear-layer
// matrices as WeightMatrix (f32, or bf16 on the cpu backend), everything else as f32.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "models/decoder_spec.h"
#include "runtime/backend.h"
#include "runtime/shard_layout.h"
#include "tensor/float_buffer.h"
#include "tensor/weight_matrix.h"

namespace canrun {

struct NormWeights {
  FloatBuffer weight, bias;  // bias empty for RMSNorm and bias-free LayerNorm
  bool present() const { return !weight.empty(); }
};

struct ExpertWeights {
  WeightMatrix gate, up, down;                 // [out, in]
  FloatBuffer gate_bias, up_bias, down_bias;   // gpt-oss; deepseek_v2 shared experts with mlp_bias
};

// Multi-head latent attention (spec.latent_attention); without q_lora_rank the query comes
// from LayerWeights::q_proj.
struct LatentAttentionWeights {
  WeightMatrix q_a;             // [q_lora_rank, hidden]
  FloatBuffer q_a_bias;
  NormWeights q_a_norm;
  WeightMatrix q_b;             // [heads * (nope + rope), q_lora_rank]
  WeightMatrix kv_a;            // [kv_lora_rank + rope, hidden]
  FloatBuffer kv_a_bias;
  NormWeights kv_a_norm;
  WeightMatrix kv_b;            // [heads * (nope + value), kv_lora_rank]
};

struct LayerWeights {
  NormWeights attn_norm, post_attn_norm, mlp_norm, post_mlp_norm;  // absent when the family has none
  WeightMatrix q_proj, k_proj, v_proj, o_proj;  // [out, in] whatever the stored layout
  FloatBuffer q_bias, k_bias, v_bias, o_bias;  // empty when the family has none
  NormWeights q_norm, k_norm;                  // absent unless spec.qk_norm_kind != kNone
  LatentAttentionWeights latent;
  WeightMatrix gate_proj, up_proj, down_proj;  // dense MLP; gate empty for a plain MLP
  FloatBuffer gate_bias, up_bias, down_bias;
  FloatBuffer sinks;                           // [num_heads] when spec.attention_sinks
  WeightMatrix router;                         // MoE layers: [num_experts, hidden]
  FloatBuffer router_bias;
  std::vector<ExpertWeights> experts;
  ExpertWeights shared_expert;
  WeightMatrix shared_expert_gate;             // [1, hidden]
};

struct DecoderWeights {
  WeightMatrix embed_tokens;    // [vocab, hidden], row-major
  FloatBuffer embed_positions;  // learned positions, empty when rotary
  NormWeights final_norm;
  WeightMatrix lm_head;  // the output projection; when tied, embed_tokens viewed in place
  FloatBuffer lm_head_bias;
  std::vector<LayerWeights> layers;

  // Reads every tensor under the transformers names, checking shapes. f32 tensors
  // are used in place from the mapping; bf16/f16 are widened once, except that the cpu
  // backend keeps bf16 matrices as bf16 (in place when aligned); fused or transposed
  // layouts are split into [out, in] matrices once. A rank of a sharded run reads only its
  // part of each split matrix (shard_layout.h); experts holds only its experts.
  static DecoderWeights load(const DecoderSpec& spec, const WeightStore& store, Backend backend,
                             Shard shard = {});
};

// The tensors a checkpoint of this spec holds, as published (names, stored shapes), and what
// a synthetic checkpoint fills them with.
enum class TensorRole { kMatrix, kNorm, kBias, kPacked };  // kPacked: U8 (MXFP4 blocks, scales)
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  TensorRole role;
};
std::vector<TensorInfo> decoder_tensors(const DecoderSpec& spec);

}  // namespace canrun
