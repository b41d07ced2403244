// MPNet: BERT's post-norm encoder without token types, positions numbered from padding_idx + 1
// (2: MPNetEmbeddings fixes padding_idx at 1), and a relative position bias shared by every
// layer (encoder.relative_attention_bias: 32 of T5's bidirectional buckets up to distance 128,
// the buckets transformers computes whatever relative_attention_num_buckets says).
#include "models/encoder_common.h"
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

constexpr int64_t kPositionOffset = 2;
constexpr int64_t kBuckets = 32;

DecoderSpec read_mpnet(const ConfigReader& config) {
  DecoderSpec spec = read_bert_sizes(config, {.vocab_size = 30527});
  const int64_t table = config.integer("max_position_embeddings", 514, kPositionOffset + 1, int64_t{1} << 20);
  spec.position_offset = kPositionOffset;
  spec.max_positions = table - kPositionOffset;
  const int64_t buckets = config.integer("relative_attention_num_buckets", kBuckets, 1, 1 << 16);
  if (buckets != kBuckets)
    reject_option(config, "relative_attention_num_buckets", std::to_string(buckets), spec.model_type,
                  "MPNetEncoder buckets positions into 32 whatever the table holds; supported: 32");
  spec.relative_buckets = kBuckets;
  spec.relative_max_distance = 128;
  apply_post_norm_encoder(spec, "mpnet.");
  WeightNames& n = spec.names;
  n.embed = "embeddings.word_embeddings";
  n.positions = "embeddings.position_embeddings";
  n.embed_norm = "embeddings.LayerNorm";
  n.layers = "encoder.layer";
  n.relative_attention_bias = "encoder.relative_attention_bias";
  n.q = "attention.attn.q";
  n.k = "attention.attn.k";
  n.v = "attention.attn.v";
  n.o = "attention.attn.o";
  // Post-norm: attention.LayerNorm follows the attention's residual add, output.LayerNorm the MLP's.
  n.attn_norm = "attention.LayerNorm";
  n.up = "intermediate.dense";
  n.down = "output.dense";
  n.mlp_norm = "output.LayerNorm";
  return spec;
}

const ArchitectureRegistration kMpnet({"mpnet",
                                       "MPNet encoder: BERT's layers, positions from 2, a relative position bias in "
                                       "every layer's attention",
                                       read_mpnet,
                                       {"hidden_act", "layer_norm_eps", "relative_attention_num_buckets"},
                                       {"MPNetModel", "MPNetForMaskedLM", "MPNetForSequenceClassification"}});

}  // namespace
}  // namespace canrun
