// ModernBERT: a pre-norm encoder without learned positions. The token embeddings are
// LayerNorm'd (embeddings.norm); each layer is x += Wo(attention(attn_norm(x))) with q, k and v
// from one projection (attn.Wqkv, [q; k; v]) rotated in halves, then x += mlp(mlp_norm(x)), the
// MLP Wo(act(a) * b) with [a; b] = Wi(x) (a GeGLU); a final_norm ends it. The first layer's
// attn_norm is an Identity. Layers are global (full_attention: every token sees every other) or
// local (sliding_attention: |query - key| <= local_attention / 2, integer halved, as transformers'
// bidirectional sliding mask bounds it), by layer_types or, in older configs, a global layer
// every global_attn_every_n_layers from the first; each kind rotates with its own theta
// (rope_parameters keyed by layer type, or global_rope_theta 160000 and local_rope_theta 10000,
// rope_scaling applying to both). Every LayerNorm has a bias only with norm_bias; the
// projections' biases follow attention_bias and mlp_bias. Its sizes are BERT's names, its
// epsilon norm_eps and its activation hidden_activation. A padded batch in transformers (its
// attention mask, or unpadded with flash attention) gives each text what it gives alone, which is
// what canrun computes: it never pads, each text's positions counted from 0.
#include "models/encoder_common.h"
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

std::vector<int64_t> read_windows(const ConfigReader& config, int64_t num_layers) {
  const int64_t local_attention = config.integer("local_attention", 128, 1, int64_t{1} << 30);
  const int64_t every = config.integer("global_attn_every_n_layers", 3, 1, 1024);
  // canrun's window W means |query - key| < W.
  const int64_t window = local_attention / 2 + 1;
  return read_layer_type_windows(config, num_layers, window, [every](int64_t i) { return i % every != 0; });
}

void read_ropes(const ConfigReader& config, DecoderSpec& spec) {
  if (config.has("rope_parameters")) {
    const Json& params = config.json()["rope_parameters"];
    if (!params.is_object() || !params.contains("full_attention"))
      config.reject("rope_parameters", "must be keyed by layer type, \"full_attention\" and \"sliding_attention\"");
  }
  RopeDefaults global;
  global.theta = 160000.0;
  global.theta_key = "global_rope_theta";
  global.max_positions = spec.max_positions;
  RopeDefaults local = global;
  local.theta = 10000.0;
  local.theta_key = "local_rope_theta";
  read_layer_type_ropes(config, spec, global, local);
  // Older configs' rope_scaling applies to both kinds of layer (read_layer_type_ropes gives it
  // to the global ones).
  if (!config.has("rope_parameters") && config.has("rope_scaling")) {
    const ConfigReader scaling = config.object("rope_scaling");
    spec.local_rope = read_rope_parameters(config, &scaling, spec.head_dim, local);
  }
}

DecoderSpec read_modernbert(const ConfigReader& config) {
  DecoderSpec spec = read_bert_sizes(config, {.vocab_size = 50368,
                                              .num_layers = 22,
                                              .intermediate_size = 1152,
                                              .norm_eps = 1e-5,
                                              .norm_eps_key = "norm_eps",
                                              .activation_key = "hidden_activation"});
  if (config.has("head_dim") && config.integer("head_dim", std::nullopt, 1, 1 << 16) != spec.head_dim)
    config.reject("head_dim", "must be hidden_size / num_attention_heads (" + std::to_string(spec.head_dim) +
                                  "), the width ModernBERT's attention gives each head");
  spec.max_positions = config.integer("max_position_embeddings", 8192, 1, int64_t{1} << 24);
  apply_encoder(spec, "model.");
  spec.norm = layer_norm(spec.norm_eps, config.boolean("norm_bias", false));
  spec.fused_qkv = FusedQkv::kConcat;
  spec.qkv_bias = spec.o_bias = config.boolean("attention_bias", false);
  spec.gated_mlp = true;
  spec.fused_gate_up = true;
  spec.mlp_bias = config.boolean("mlp_bias", false);
  spec.sliding_window = read_windows(config, spec.num_layers);
  read_ropes(config, spec);
  spec.attn_norm_layers.assign(static_cast<size_t>(spec.num_layers), true);
  spec.attn_norm_layers[0] = false;
  WeightNames& n = spec.names;
  n.embed = "embeddings.tok_embeddings";
  n.embed_norm = "embeddings.norm";
  n.layers = "layers";
  n.attn_norm = "attn_norm";
  n.qkv = "attn.Wqkv";
  n.o = "attn.Wo";
  n.mlp_norm = "mlp_norm";
  n.gate_up = "mlp.Wi";
  n.down = "mlp.Wo";
  n.final_norm = "final_norm";
  return spec;
}

const ArchitectureRegistration kModernBert({"modernbert",
                                            "ModernBERT encoder: pre-norm, rotary, local/global attention, GeGLU",
                                            read_modernbert,
                                            {"hidden_activation", "norm_eps", "norm_bias", "attention_bias",
                                             "mlp_bias", "local_attention", "layer_types / global_attn_every_n_layers",
                                             "rope_parameters per layer type / global_rope_theta, local_rope_theta",
                                             "rope default|linear|dynamic|yarn|llama3", "classifier_pooling",
                                             "classifier_activation", "classifier_bias"},
                                            {"ModernBertModel", "ModernBertForMaskedLM",
                                             "ModernBertForSequenceClassification"}});

}  // namespace
}  // namespace canrun
