// EXAONE 4.0: OLMo 2's norms after the blocks, q/k RMSNorm per head, and sliding-window layers
// (three of four by default) that rotate while the full-attention layers have no positions; with
// sliding_window null every layer is full and rotates.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_exaone4(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 102400;
  defaults.hidden_size = 4096;
  defaults.intermediate_size = 16384;
  defaults.num_layers = 32;
  defaults.num_heads = 32;
  defaults.num_kv_heads = 32;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kPerHead;
  spec.names.attn_norm = "";
  spec.names.post_attn_norm = "post_attention_layernorm";
  spec.names.mlp_norm = "";
  spec.names.post_mlp_norm = "post_feedforward_layernorm";
  const int64_t window = sliding_window_or_null(config, 4096);
  if (window == 0) return spec;
  const int64_t pattern = config.integer("sliding_window_pattern", 4, 1, 1 << 20);
  spec.sliding_window = read_layer_type_windows(config, spec.num_layers, window,
                                                [pattern](int64_t i) { return (i + 1) % pattern != 0; });
  spec.rope_layers.assign(static_cast<size_t>(spec.num_layers), false);
  for (int64_t i = 0; i < spec.num_layers; ++i) spec.rope_layers[i] = spec.sliding_window[i] > 0;
  return spec;
}

const ArchitectureRegistration kExaone4({"exaone4",
                                         "EXAONE 4.0: post-block RMSNorms, per-head q/k norms, rotating sliding "
                                         "layers and full layers without positions",
                                         read_exaone4,
                                         {"sliding_window (null: all full)", "sliding_window_pattern",
                                          "layer_types sliding_attention|full_attention", "tie_word_embeddings",
                                          "rope default|linear|dynamic|yarn|llama3"},
                                         {"Exaone4ForCausalLM"}});

}  // namespace
}  // namespace canrun
