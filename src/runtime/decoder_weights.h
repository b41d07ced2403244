// The weights of a decoder-only transformer, as f32, named and shaped from its spec.
#pragma once

#include <vector>

#include "checkpoint/safetensors.h"
#include "models/decoder_spec.h"
#include "tensor/float_buffer.h"

namespace canrun {

struct LayerWeights {
  FloatBuffer attn_norm;
  FloatBuffer q_proj, k_proj, v_proj, o_proj;
  FloatBuffer q_bias, k_bias, v_bias, o_bias;  // empty when the family has none
  FloatBuffer q_norm, k_norm;                  // empty unless spec.qk_norm
  FloatBuffer mlp_norm;
  FloatBuffer gate_proj, up_proj, down_proj;
  FloatBuffer gate_bias, up_bias, down_bias;
};

struct DecoderWeights {
  FloatBuffer embed_tokens;
  FloatBuffer final_norm;
  FloatBuffer lm_head;  // empty when tied to embed_tokens
  std::vector<LayerWeights> layers;

  // Reads every tensor under the transformers names, checking shapes. f32 tensors
  // are used in place from the mapping; bf16/f16 are widened once.
  static DecoderWeights load(const DecoderSpec& spec, const WeightStore& store);
  const float* output_projection() const {
    return lm_head.empty() ? embed_tokens.data() : lm_head.data();
  }
};

}  // namespace canrun
