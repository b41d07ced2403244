// What the DeepSeek-style families share: multi-head latent attention read from a config, with
// the llama-like sizes around it (deepseek_v2, deepseek_v3, glm4_moe_lite).
#pragma once

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"
#include "models/llama_like.h"

namespace canrun {

// The config class's defaults for the latent attention fields.
struct LatentDefaults {
  int64_t q_lora_rank = 1536;
  int64_t kv_lora_rank = 512;
  int64_t nope_dim = 128;
  int64_t rope_dim = 64;
  int64_t value_dim = 128;
};

// Sizes (head_dim = qk_rope_head_dim, as transformers' configs set it), the latent attention
// (q_lora_rank null: q_proj), attention_bias on q_a, kv_a and o, and the softmax scale with
// yarn's mscale_all_dim. Rejects key/value heads other than the query heads and partial rotary.
DecoderSpec read_latent_decoder(const ConfigReader& config, LlamaLikeDefaults defaults, const LatentDefaults& latent);

}  // namespace canrun
