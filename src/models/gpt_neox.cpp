// GPT-NeoX (Pythia...): LayerNorm with biases, fused per-head query_key_value, partial
// rotary (rotary_pct), parallel residual (use_parallel_residual), untied embed_out.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_gpt_neox(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 50432;
  defaults.hidden_size = 6144;
  defaults.intermediate_size = 24576;
  defaults.num_layers = 44;
  defaults.num_heads = 64;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "layer_norm_eps";
  defaults.activation = "gelu";
  defaults.head_dim_from_config = false;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.num_kv_heads = spec.num_heads;  // query_key_value holds one k and v per head
  spec.norm = layer_norm(spec.norm_eps);
  RopeDefaults rope;
  rope.max_positions = spec.max_positions;
  rope.theta_key = "rotary_emb_base";
  rope.partial_key = "rotary_pct";
  rope.partial_rotary_factor = 0.25;
  spec.rope = read_rope_spec(config, spec.head_dim, rope);
  spec.gated_mlp = false;
  spec.qkv_bias = spec.o_bias = config.boolean("attention_bias", true);
  spec.mlp_bias = true;
  spec.fused_qkv = FusedQkv::kPerHead;
  spec.residual = config.boolean("use_parallel_residual", true) ? Residual::kParallel : Residual::kSequential;
  WeightNames& n = spec.names;
  n.embed = "gpt_neox.embed_in";
  n.final_norm = "gpt_neox.final_layer_norm";
  n.lm_head = "embed_out";
  n.layers = "gpt_neox.layers";
  n.qkv = "attention.query_key_value";
  n.o = "attention.dense";
  n.up = "mlp.dense_h_to_4h";
  n.down = "mlp.dense_4h_to_h";
  return spec;
}

const ArchitectureRegistration kGptNeox({"gpt_neox", "GPT-NeoX: parallel residual, partial rotary, fused per-head qkv",
                                         read_gpt_neox,
                                         {"use_parallel_residual", "rotary_pct", "rotary_emb_base", "attention_bias",
                                          "hidden_act", "tie_word_embeddings",
                                          "rope default|linear|dynamic|yarn|llama3"}, {"GPTNeoXForCausalLM"}});

}  // namespace
}  // namespace canrun
