// BERT and the families that keep its layout (RoBERTa, XLM-RoBERTa): an encoder. Word, learned
// absolute position and token type embeddings summed and LayerNorm'd; post-LayerNorm layers of
// bidirectional attention (biased q/k/v/o) and a GELU MLP; the hidden state of every token as
// the output (the pooler and task heads are read by what uses the encoder). RoBERTa numbers its
// positions from padding_idx + 1.
#include "models/encoder_common.h"
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_bert_layout(const ConfigReader& config, int64_t position_offset, const std::string& prefix) {
  DecoderSpec spec = read_bert_sizes(config, {});
  const int64_t table = config.integer("max_position_embeddings", 512, position_offset + 1, int64_t{1} << 24);
  spec.position_offset = position_offset;
  spec.max_positions = table - position_offset;
  spec.type_vocab_size = config.integer("type_vocab_size", 2, 1, 1 << 16);
  const std::string positions = config.string("position_embedding_type", "absolute");
  if (positions != "absolute")
    reject_option(config, "position_embedding_type", positions, spec.model_type, "supported: absolute");
  apply_post_norm_encoder(spec, prefix);
  WeightNames& n = spec.names;
  n.embed = "embeddings.word_embeddings";
  n.positions = "embeddings.position_embeddings";
  n.token_types = "embeddings.token_type_embeddings";
  n.embed_norm = "embeddings.LayerNorm";
  n.layers = "encoder.layer";
  n.q = "attention.self.query";
  n.k = "attention.self.key";
  n.v = "attention.self.value";
  n.o = "attention.output.dense";
  // A post-norm layer: attn_norm follows the attention's residual add, mlp_norm the MLP's.
  n.attn_norm = "attention.output.LayerNorm";
  n.up = "intermediate.dense";
  n.down = "output.dense";
  n.mlp_norm = "output.LayerNorm";
  return spec;
}

DecoderSpec read_bert(const ConfigReader& config) { return read_bert_layout(config, 0, "bert."); }

// RobertaEmbeddings numbers positions from padding_idx + 1 (pad_token_id, 1 in every RoBERTa).
DecoderSpec read_roberta(const ConfigReader& config) {
  return read_bert_layout(config, config.integer("pad_token_id", 1, 0, 1 << 20) + 1, "roberta.");
}

const std::vector<std::string> kOptions = {"hidden_act", "layer_norm_eps", "position_embedding_type",
                                           "type_vocab_size"};

const ArchitectureRegistration kBert({"bert", "BERT encoder: learned positions and token types, post-LayerNorm, GELU",
                                      read_bert, kOptions,
                                      {"BertModel", "BertForSequenceClassification", "BertForMaskedLM"}});
const ArchitectureRegistration kRoberta({"roberta", "RoBERTa encoder: BERT's layout, positions from padding_idx + 1",
                                         read_roberta, kOptions,
                                         {"RobertaModel", "RobertaForSequenceClassification", "RobertaForMaskedLM"}});
const ArchitectureRegistration kXlmRoberta({"xlm-roberta", "XLM-RoBERTa encoder: RoBERTa's layout", read_roberta,
                                            kOptions,
                                            {"XLMRobertaModel", "XLMRobertaForSequenceClassification",
                                             "XLMRobertaForMaskedLM"}});

}  // namespace
}  // namespace canrun
