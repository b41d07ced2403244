// Gemma 2: Gemma with norms before and after attention and MLP, alternating sliding-window
// layers, attention-logit and final-logit soft-capping, and query_pre_attn_scalar.
#include "models/families_common.h"
#include "models/gemma_common.h"
#include "models/llama_like.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_gemma2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 256000;
  defaults.hidden_size = 2304;
  defaults.intermediate_size = 9216;
  defaults.num_layers = 26;
  defaults.num_heads = 8;
  defaults.num_kv_heads = 4;
  defaults.head_dim = 256;
  defaults.max_positions = 8192;
  defaults.activation = "gelu_pytorch_tanh";
  defaults.activation_key = "hidden_activation";
  defaults.tie_embeddings = true;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  apply_gemma2_layout(config, spec, 50.0, 30.0);
  reject_bidirectional_attention(config, spec);
  const int64_t window = sliding_window_or_null(config, 4096);
  spec.sliding_window = read_layer_type_windows(config, spec.num_layers, window,
                                                [](int64_t i) { return (i + 1) % 2 != 0; });
  return spec;
}

const ArchitectureRegistration kGemma2({"gemma2", "Gemma 2: sandwich norms, alternating sliding window, soft-capping",
                                        read_gemma2,
                                        {"sliding_window", "layer_types", "attn_logit_softcapping",
                                         "final_logit_softcapping", "query_pre_attn_scalar", "hidden_activation",
                                         "tie_word_embeddings", "rope default|linear|dynamic|yarn|llama3"}, {"Gemma2ForCausalLM"}});

}  // namespace
}  // namespace canrun
