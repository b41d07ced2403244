// Granite (3.x): the Llama layout with four multipliers: embeddings, each block's residual
// contribution, the attention scale, and a divisor on the logits.
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_granite(const ConfigReader& config) {
  DecoderSpec spec = read_llama_like_spec(config, LlamaLikeDefaults{});
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.mlp_bias = config.boolean("mlp_bias", false);
  spec.embedding_scale = static_cast<float>(config.number("embedding_multiplier", 1.0));
  spec.residual_scale = static_cast<float>(config.number("residual_multiplier", 1.0));
  spec.attention_scale = static_cast<float>(config.number("attention_multiplier", 1.0));
  const double logits_scaling = config.number("logits_scaling", 1.0);
  if (logits_scaling == 0) config.reject("logits_scaling", "must not be zero");
  spec.logits_scale = static_cast<float>(1.0 / logits_scaling);
  if (spec.attention_scale <= 0) config.reject("attention_multiplier", "must be positive");
  return spec;
}

const ArchitectureRegistration kGranite({"granite", "Granite: Llama layout with embedding/residual/attention/logit multipliers",
                                         read_granite,
                                         {"embedding_multiplier", "residual_multiplier", "attention_multiplier",
                                          "logits_scaling", "attention_bias", "mlp_bias", "tie_word_embeddings",
                                          "rope default|linear|dynamic|yarn|llama3"}, {"GraniteForCausalLM"}});

}  // namespace
}  // namespace canrun
