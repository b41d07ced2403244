// What the encoder families share (bert, roberta, xlm-roberta, distilbert, mpnet, modernbert,
// nomic_bert, gte).
#pragma once

#include <string>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

// A family's transformers config defaults for the sizes BERT's config names, and the fields
// that hold its norm epsilon and activation.
struct EncoderSizeDefaults {
  int64_t vocab_size = 30522;
  int64_t num_layers = 12;
  int64_t intermediate_size = 3072;
  double norm_eps = 1e-12;
  std::string norm_eps_key = "layer_norm_eps";
  std::string activation = "gelu";
  std::string activation_key = "hidden_act";
};

// The sizes BERT's config names (vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size; hidden_size 768 and 12 heads by default), the norm
// epsilon and the activation under the family's names; the model_type and any
// quantization_config. Errors name the field.
DecoderSpec read_bert_sizes(const ConfigReader& config, const EncoderSizeDefaults& defaults);

// What makes `spec` an encoder: every token's hidden state as the output (no LM head),
// bidirectional attention, as many key/value heads as query heads. `prefix` is what a task
// head's checkpoint puts before the base model's names ("bert.").
void apply_encoder(DecoderSpec& spec, const std::string& prefix);

// BERT's encoder layout on `spec`, whose sizes are set: apply_encoder, learned absolute
// positions, post-LayerNorm layers (norm_eps set) with biased projections and a plain MLP.
void apply_post_norm_encoder(DecoderSpec& spec, const std::string& prefix);

// BERT's rotary descendants (nomic_bert, gte): apply_post_norm_encoder's layout without learned
// positions, every head rotated whole in halves (rope_parameters or rope_theta, `default_theta`
// when neither is given; only the default rope type), and a gated MLP, act(gate) * up.
void apply_rotary_post_norm_encoder(const ConfigReader& config, DecoderSpec& spec, const std::string& prefix,
                                    double default_theta);

// A key of the original remote code that transformers' `model_class` does not read: absent, null
// or `implemented` (what transformers computes), else refused naming the field.
void require_implemented(const ConfigReader& config, const std::string& key, const Json& implemented,
                         const std::string& model_class);

}  // namespace canrun
