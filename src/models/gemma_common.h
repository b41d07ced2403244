// What the Gemma generations share: (1 + w) RMSNorms and embeddings scaled by sqrt(hidden).
#pragma once

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

void apply_gemma_basics(const ConfigReader& config, DecoderSpec& spec);

// Gemma 2 and 3: norms before and after both blocks, query_pre_attn_scalar, soft-capping.
void apply_gemma2_layout(const ConfigReader& config, DecoderSpec& spec, double default_attn_softcap,
                         double default_final_softcap);

// Refuses use_bidirectional_attention: true, for the families that run causally only.
void reject_bidirectional_attention(const ConfigReader& config, const DecoderSpec& spec);

}  // namespace canrun
