// Alibaba's GTE ("new": gte-multilingual-base, gte-*-en-v1.5): NomicBERT's rotary post-norm
// encoder with biases and a GELU-gated MLP. Word embeddings (plus token types when
// type_vocab_size > 0) LayerNorm'd; each layer a fused, biased [q; k; v] projection
// (attention.qkv_proj), heads rotated whole in halves (rope_theta, 160000 by default), a biased
// attention.o_proj, attn_ln after the attention's residual add, then
// down_proj(gelu(gate) * up) + bias with [up; gate] fused in one unbiased mlp.up_gate_proj, and
// mlp_ln after the MLP's. The names are those the Hub's checkpoints store (the remote code's
// NewModel, "new." before them under a task head; "gte." where transformers saved the head),
// which transformers renames on load.
//
// The Hub's configs say model_type "new", which transformers 5.23.0 does not map (its GteConfig
// is "gte"); canrun reads both alike. transformers ignores the remote code's switches; canrun
// refuses those whose value transformers does not implement (position_embedding_type other
// than rope, layer_norm_type other than layer_norm, pack_qkv false, logn_attention_scale).
// rope_scaling {"type": "ntk"} (gte-multilingual-base) is refused as transformers' rope init
// refuses it (KeyError 'ntk').
#include "models/encoder_common.h"
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_gte(const ConfigReader& config) {
  DecoderSpec spec = read_bert_sizes(config, {.vocab_size = 250048});
  spec.max_positions = config.integer("max_position_embeddings", 8192, 1, int64_t{1} << 24);
  spec.type_vocab_size = config.integer("type_vocab_size", 1, 0, 1 << 16);
  require_implemented(config, "position_embedding_type", "rope", "GteModel");
  require_implemented(config, "layer_norm_type", "layer_norm", "GteModel");
  require_implemented(config, "pack_qkv", true, "GteModel");
  require_implemented(config, "logn_attention_scale", false, "GteModel");
  apply_rotary_post_norm_encoder(config, spec, "new.", 160000.0);
  spec.other_base_model_prefixes = {"gte."};
  spec.fused_qkv = FusedQkv::kConcat;
  spec.fused_gate_up = true;
  spec.fused_up_first = true;
  spec.mlp_bias = false;
  spec.down_bias = true;
  WeightNames& n = spec.names;
  n.embed = "embeddings.word_embeddings";
  n.token_types = spec.type_vocab_size > 0 ? "embeddings.token_type_embeddings" : "";
  n.embed_norm = "embeddings.LayerNorm";
  n.layers = "encoder.layer";
  n.qkv = "attention.qkv_proj";
  n.o = "attention.o_proj";
  // Post-norm: attn_ln follows the attention's residual add, mlp_ln the MLP's.
  n.attn_norm = "attn_ln";
  n.gate_up = "mlp.up_gate_proj";
  n.down = "mlp.down_proj";
  n.mlp_norm = "mlp_ln";
  return spec;
}

const std::vector<std::string> kOptions = {"hidden_act", "layer_norm_eps", "rope_theta", "type_vocab_size"};

const ArchitectureRegistration kGte({"gte",
                                     "GTE encoder: post-norm layers with rotary positions, fused biased qkv, a "
                                     "GELU-gated MLP",
                                     read_gte, kOptions, {"GteModel"}});
const ArchitectureRegistration kNew({"new", "GTE encoder as the Hub's configs name it (gte's reader)", read_gte,
                                     kOptions, {"NewModel"}});

}  // namespace
}  // namespace canrun
