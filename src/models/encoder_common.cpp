#include "models/encoder_common.h"

#include "models/llama_like.h"

namespace canrun {

void apply_post_norm_encoder(DecoderSpec& spec, const std::string& prefix) {
  spec.output = ModelOutput::kHiddenStates;
  spec.causal = false;
  spec.base_model_prefix = prefix;
  spec.num_kv_heads = spec.num_heads;
  spec.norm = layer_norm(spec.norm_eps);
  spec.gated_mlp = false;
  spec.rotary = false;
  spec.residual = Residual::kPostNorm;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = true;
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);
  spec.names.final_norm = "";
  spec.names.lm_head = "";
}

}  // namespace canrun
