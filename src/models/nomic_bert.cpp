// NomicBERT (nomic-embed-text): BERT's post-norm encoder with rotary positions instead of learned
// ones and a SwiGLU MLP, no biases anywhere. Word and token type embeddings summed and
// LayerNorm'd (emb_ln); each layer a fused [q; k; v] projection (attn.Wqkv), heads rotated whole
// in halves (rope_theta 1000 by default), attn.out_proj, norm1 after the attention's residual
// add, then fc2(silu(fc12(x)) * fc11(x)) and norm2 after the MLP's. The names are those the Hub's
// checkpoints store (the original remote code's), which transformers renames on load.
//
// transformers' NomicBertConfig reads its own keys (hidden_size, num_hidden_layers, hidden_act,
// layer_norm_eps, rope_parameters / rope_theta, max_position_embeddings) and ignores the
// original ones; where a config gives only the original sizes (n_embd, n_layer, n_head, n_inner),
// canrun reads them. The original switches transformers does not implement are
// refused unless they say what transformers does (rotary_emb_fraction 1, no interleaving, no
// prenorm, no biases, swiglu); rotary_emb_base, rotary_scaling_factor, n_positions and
// layer_norm_epsilon are ignored as transformers ignores them.
#include "models/encoder_common.h"
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_nomic_bert(const ConfigReader& config) {
  // The original sizes stand in for transformers' keys the config lacks.
  Json keys = config.json();
  for (const auto& [native, original] : {std::pair{"hidden_size", "n_embd"}, {"num_hidden_layers", "n_layer"},
                                         {"num_attention_heads", "n_head"}, {"intermediate_size", "n_inner"}})
    if (!keys.contains(native) && keys.contains(original)) keys[native] = keys[original];
  const ConfigReader sizes(keys, config.path());
  DecoderSpec spec = read_bert_sizes(sizes, {.vocab_size = 30528, .activation = "silu"});
  if (config.integer("head_dim", spec.head_dim, 1, 1 << 16) != spec.head_dim)
    config.reject("head_dim", "must be hidden_size / num_attention_heads");
  spec.max_positions = config.integer("max_position_embeddings", 2048, 1, int64_t{1} << 24);
  spec.type_vocab_size = config.integer("type_vocab_size", 2, 1, 1 << 16);
  require_implemented(config, "rotary_emb_fraction", 1.0, "NomicBertModel");
  require_implemented(config, "rotary_emb_interleaved", false, "NomicBertModel");
  require_implemented(config, "prenorm", false, "NomicBertModel");
  for (const char* bias : {"qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias"})
    require_implemented(config, bias, false, "NomicBertModel");
  require_implemented(config, "activation_function", "swiglu", "NomicBertModel");
  apply_rotary_post_norm_encoder(config, spec, "nomic_bert.", 1000.0);
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = false;
  spec.fused_qkv = FusedQkv::kConcat;
  WeightNames& n = spec.names;
  n.embed = "embeddings.word_embeddings";
  n.token_types = "embeddings.token_type_embeddings";
  n.embed_norm = "emb_ln";
  n.layers = "encoder.layers";
  n.qkv = "attn.Wqkv";
  n.o = "attn.out_proj";
  // Post-norm: norm1 follows the attention's residual add, norm2 the MLP's.
  n.attn_norm = "norm1";
  n.gate = "mlp.fc12";
  n.up = "mlp.fc11";
  n.down = "mlp.fc2";
  n.mlp_norm = "norm2";
  return spec;
}

const ArchitectureRegistration kNomicBert({"nomic_bert",
                                           "NomicBERT encoder: BERT's post-norm layers with rotary positions, "
                                           "fused Wqkv, a SwiGLU MLP and no biases",
                                           read_nomic_bert,
                                           {"hidden_act", "layer_norm_eps", "rope_theta", "type_vocab_size",
                                            "n_embd/n_layer/n_head/n_inner (the original sizes)"},
                                           {"NomicBertModel", "NomicBertForSequenceClassification"}});

}  // namespace
}  // namespace canrun
