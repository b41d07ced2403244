// OLMo 2: norms after attention and MLP instead of before, and q/k RMSNorm over all heads. OLMo 3:
// the same layers, three of four sliding (layer_types), each kind with its own rope.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_olmo2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 50304;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_biased_qk_norm_attention(config, spec, QkNorm::kWhole);
  spec.names.attn_norm = "";
  spec.names.post_attn_norm = "post_attention_layernorm";
  spec.names.mlp_norm = "";
  spec.names.post_mlp_norm = "post_feedforward_layernorm";
  return spec;
}

DecoderSpec read_olmo3(const ConfigReader& config) {
  DecoderSpec spec = read_olmo2(config);
  const int64_t window = sliding_window_or_null(config, 4096);
  spec.sliding_window =
      read_layer_type_windows(config, spec.num_layers, window, [](int64_t i) { return (i + 1) % 4 != 0; });
  RopeDefaults rope;
  rope.theta = 500000.0;
  rope.max_positions = spec.max_positions;
  read_layer_type_ropes(config, spec, rope, rope);
  return spec;
}

const ArchitectureRegistration kOlmo3({"olmo3",
                                       "OLMo 3: OLMo 2's layers, three of four sliding, a rope per layer kind",
                                       read_olmo3,
                                       {"layer_types sliding_attention|full_attention", "sliding_window",
                                        "rope_parameters per layer type", "attention_bias", "tie_word_embeddings",
                                        "rope default|linear|dynamic|yarn|llama3"},
                                       {"Olmo3ForCausalLM"}});

const ArchitectureRegistration kOlmo2({"olmo2", "OLMo 2: post-block RMSNorms, q/k RMSNorm over all heads", read_olmo2,
                                       {"attention_bias", "tie_word_embeddings",
                                        "rope default|linear|dynamic|yarn|llama3"}, {"Olmo2ForCausalLM"}});

}  // namespace
}  // namespace canrun
