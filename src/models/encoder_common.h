// What BERT's descendants share as encoders (bert, roberta, xlm-roberta, distilbert).
#pragma once

#include <string>

#include "models/decoder_spec.h"

namespace canrun {

// BERT's encoder layout on `spec`, whose sizes are set: every token's hidden state as the
// output, bidirectional attention, learned absolute positions, post-LayerNorm layers (norm_eps
// set) with biased projections and a plain MLP. `prefix` is what a task head's checkpoint puts
// before the base model's names ("bert.").
void apply_post_norm_encoder(DecoderSpec& spec, const std::string& prefix);

}  // namespace canrun
