// DistilBERT: BERT's encoder, six layers by default, without token types or the pooler. Its
// config names the sizes dim, n_layers, n_heads and hidden_dim; every LayerNorm's epsilon is
// 1e-12. Sinusoidal positions (sinusoidal_pos_embds) are stored in the position table like
// learned ones, so both read alike.
#include "models/encoder_common.h"
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_distilbert(const ConfigReader& config) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  read_quantization(config, spec);
  spec.vocab_size = config.integer("vocab_size", 30522, 1, int64_t{1} << 22);
  spec.hidden_size = config.integer("dim", 768, 1, int64_t{1} << 17);
  spec.num_layers = config.integer("n_layers", 6, 1, 1024);
  spec.num_heads = config.integer("n_heads", 12, 1, 4096);
  if (spec.hidden_size % spec.num_heads != 0) config.reject("dim", "must be divisible by n_heads");
  spec.head_dim = spec.hidden_size / spec.num_heads;
  spec.intermediate_size = config.integer("hidden_dim", 4 * spec.hidden_size, 1, int64_t{1} << 20);
  spec.max_positions = config.integer("max_position_embeddings", 512, 1, int64_t{1} << 24);
  spec.norm_eps = 1e-12f;
  spec.activation = read_activation(config, "activation", "gelu", spec.model_type);
  apply_post_norm_encoder(spec, "distilbert.");
  WeightNames& n = spec.names;
  n.embed = "embeddings.word_embeddings";
  n.positions = "embeddings.position_embeddings";
  n.embed_norm = "embeddings.LayerNorm";
  n.layers = "transformer.layer";
  n.q = "attention.q_lin";
  n.k = "attention.k_lin";
  n.v = "attention.v_lin";
  n.o = "attention.out_lin";
  // Post-norm: sa_layer_norm follows the attention's residual add, output_layer_norm the MLP's.
  n.attn_norm = "sa_layer_norm";
  n.up = "ffn.lin1";
  n.down = "ffn.lin2";
  n.mlp_norm = "output_layer_norm";
  return spec;
}

const ArchitectureRegistration kDistilBert({"distilbert",
                                            "DistilBERT encoder: BERT's layers without token types, sizes as dim/n_layers/n_heads",
                                            read_distilbert,
                                            {"activation", "sinusoidal_pos_embds", "hidden_dim"},
                                            {"DistilBertModel", "DistilBertForSequenceClassification",
                                             "DistilBertForMaskedLM"}});

}  // namespace
}  // namespace canrun
