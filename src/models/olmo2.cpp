// OLMo 2: norms after attention and MLP instead of before, and q/k RMSNorm over all heads.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_olmo2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 50304;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kWhole;
  spec.names.attn_norm = "";
  spec.names.post_attn_norm = "post_attention_layernorm";
  spec.names.mlp_norm = "";
  spec.names.post_mlp_norm = "post_feedforward_layernorm";
  return spec;
}

const ArchitectureRegistration kOlmo2({"olmo2", "OLMo 2: post-block RMSNorms, q/k RMSNorm over all heads", read_olmo2,
                                       {"attention_bias", "tie_word_embeddings",
                                        "rope default|linear|dynamic|yarn|llama3"}, {"Olmo2ForCausalLM"}});

}  // namespace
}  // namespace canrun
