// Phi-3 / Phi-3.5 / Phi-4(-mini): the Llama layout with fused qkv and gate_up projections,
// partial rotary, and longrope scaling (short factors up to the pretraining length, long
// factors past it, cos/sin scaled by the attention factor).
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_phi3(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 32064;
  defaults.hidden_size = 3072;
  defaults.intermediate_size = 8192;
  defaults.max_positions = 4096;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  RopeDefaults rope;
  rope.max_positions = spec.max_positions;
  rope.top_level_original_max = true;
  rope.default_original_max = 4096;
  rope.yarn_is_longrope = true;
  spec.rope = read_rope_spec(config, spec.head_dim, rope);
  if (spec.rope.type != "default" && spec.rope.type != "longrope")
    reject_option(config, "rope_scaling", "rope type '" + spec.rope.type + "'", "phi3",
                  "transformers' Phi3 accepts default and longrope");
  spec.longrope_recompute = true;  // Phi3ForCausalLM.prepare_inputs_for_generation
  spec.fused_qkv = FusedQkv::kConcat;
  spec.fused_gate_up = true;
  spec.names.qkv = "self_attn.qkv_proj";
  spec.names.gate_up = "mlp.gate_up_proj";
  spec.sliding_window = uniform_windows(config, spec.num_layers, 0);
  return spec;
}

const ArchitectureRegistration kPhi3({"phi3", "Phi-3/Phi-4: fused qkv and gate_up, partial rotary, longrope",
                                      read_phi3,
                                      {"rope default|longrope (short/long factors, attention factor)",
                                       "partial_rotary_factor", "sliding_window", "tie_word_embeddings"}, {"Phi3ForCausalLM"}});

}  // namespace
}  // namespace canrun
