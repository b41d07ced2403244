// Gemma 3 (text): the Gemma 2 layout with per-head q/k (1 + w) RMSNorms, one sliding layer
// pattern (5 local : 1 global by default) and separate rope parameters for local and global
// layers (rope_parameters keyed by layer type, or rope_local_base_freq + rope_scaling).
// use_bidirectional_attention makes it an encoder (EmbeddingGemma).
#include "models/families_common.h"
#include "models/gemma_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_gemma3_text(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 262208;
  defaults.hidden_size = 2304;
  defaults.intermediate_size = 9216;
  defaults.num_layers = 26;
  defaults.num_heads = 8;
  defaults.num_kv_heads = 4;
  defaults.head_dim = 256;
  defaults.max_positions = 131072;
  defaults.activation = "gelu_pytorch_tanh";
  defaults.activation_key = "hidden_activation";
  defaults.tie_embeddings = true;
  defaults.rope_theta = 1000000.0;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_gemma2_layout(config, spec, 0.0, 0.0);
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kPerHead;

  const int64_t pattern = config.integer("sliding_window_pattern", 6, 1, 1 << 20);
  const int64_t window = sliding_window_or_null(config, 4096);
  spec.sliding_window = read_layer_type_windows(config, spec.num_layers, window,
                                                [pattern](int64_t i) { return (i + 1) % pattern != 0; });

  RopeDefaults global;
  global.theta = 1000000.0;
  global.max_positions = spec.max_positions;
  RopeDefaults local = global;
  local.theta = config.number("rope_local_base_freq", 10000.0);
  local.theta_key = "rope_local_base_freq";
  read_layer_type_ropes(config, spec, global, local);

  // EmbeddingGemma: an encoder. Every token sees every other, and a sliding layer's window runs
  // both ways, |query - key| < window / 2 + 1, as transformers halves it for this case.
  if (config.boolean("use_bidirectional_attention", false)) {
    spec.output = ModelOutput::kHiddenStates;
    spec.causal = false;
    for (int64_t& layer_window : spec.sliding_window)
      if (layer_window > 0) layer_window = layer_window / 2 + 1;
  }
  return spec;
}

const ArchitectureRegistration kGemma3Text({"gemma3_text",
                                            "Gemma 3 text: q/k norms, 5:1 local/global layers with their own rope",
                                            read_gemma3_text,
                                            {"sliding_window", "sliding_window_pattern", "layer_types",
                                             "rope_parameters per layer type / rope_local_base_freq",
                                             "rope default|linear|dynamic|yarn|llama3", "query_pre_attn_scalar",
                                             "attn_logit_softcapping", "final_logit_softcapping",
                                             "tie_word_embeddings", "use_bidirectional_attention"}, {"Gemma3ForCausalLM", "Gemma3TextModel"}});

}  // namespace
}  // namespace canrun
