// What BERT's descendants share as encoders (bert, roberta, xlm-roberta, distilbert, mpnet,
// nomic_bert, gte).
#pragma once

#include <string>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

// The sizes BERT's config names (vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size), layer_norm_eps and hidden_act, with BERT's defaults
// but `default_vocab` and `default_act`; the model_type and any quantization_config. Errors name
// the field.
DecoderSpec read_bert_sizes(const ConfigReader& config, int64_t default_vocab,
                            const std::string& default_act = "gelu");

// BERT's encoder layout on `spec`, whose sizes are set: every token's hidden state as the
// output, bidirectional attention, learned absolute positions, post-LayerNorm layers (norm_eps
// set) with biased projections and a plain MLP. `prefix` is what a task head's checkpoint puts
// before the base model's names ("bert.").
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
