// Cohere (Command-R, Aya): one bias-free LayerNorm feeding attention and MLP in parallel,
// interleaved rotary pairs, logits multiplied by logit_scale, tied embeddings; Command R+'s
// use_qk_norm normalises each head of q and k with a weight row of its own.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_cohere(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 256000;
  defaults.hidden_size = 8192;
  defaults.intermediate_size = 22528;
  defaults.num_layers = 40;
  defaults.num_heads = 64;
  defaults.max_positions = 8192;
  defaults.norm_eps = 1e-5;
  defaults.norm_eps_key = "layer_norm_eps";
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.norm = layer_norm(spec.norm_eps, /*bias=*/false);
  if (config.boolean("use_qk_norm", false)) {  // Command R+: a bias-free LayerNorm per head, its own weights
    spec.qk_norm = true;
    spec.qk_norm_kind = QkNorm::kPerHead;
    spec.qk_norm_weights = QkNormWeights::kHeadRows;
    spec.qk_norm_spec = spec.norm;
  }
  const bool attention_bias = config.boolean("attention_bias", false);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.residual = Residual::kParallel;
  spec.names.mlp_norm = "";
  spec.rope_interleaved = true;
  spec.logits_scale = static_cast<float>(config.number("logit_scale", 0.0625));
  return spec;
}

const ArchitectureRegistration kCohere({"cohere", "Cohere: parallel block on one LayerNorm, interleaved rotary, logit_scale",
                                        read_cohere,
                                        {"logit_scale", "attention_bias", "use_qk_norm", "tie_word_embeddings",
                                         "rope default|linear|dynamic|yarn|llama3"}, {"CohereForCausalLM"}});

}  // namespace
}  // namespace canrun
