// What BERT's descendants share as encoders (bert, roberta, xlm-roberta, distilbert).
#pragma once

#include <string>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

// The sizes BERT's config names (vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size), layer_norm_eps and hidden_act, with BERT's defaults
// but `default_vocab`; the model_type and any quantization_config. Errors name the field.
DecoderSpec read_bert_sizes(const ConfigReader& config, int64_t default_vocab);

// BERT's encoder layout on `spec`, whose sizes are set: every token's hidden state as the
// output, bidirectional attention, learned absolute positions, post-LayerNorm layers (norm_eps
// set) with biased projections and a plain MLP. `prefix` is what a task head's checkpoint puts
// before the base model's names ("bert.").
void apply_post_norm_encoder(DecoderSpec& spec, const std::string& prefix);

}  // namespace canrun
