// Qwen3-VL (image-text-to-text): a Qwen3 text model under model.language_model whose rotary
// angles take (t, h, w) positions in interleaved sections (M-RoPE), whose image tokens' embeddings
// are replaced by the vision tower's features, and whose first layers each add one of the tower's
// earlier features to them (DeepStack). The tower itself is vision/qwen_vision.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/registry.h"
#include "models/vision_language.h"

namespace canrun {
namespace {

DecoderSpec read_qwen3_vl_text(const ConfigReader& text) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 151936;
  defaults.intermediate_size = 22016;
  defaults.head_dim = 128;
  defaults.max_positions = 128000;
  defaults.rope_theta = 500000.0;
  DecoderSpec spec = read_llama_like_spec(text, defaults);
  apply_qwen3_attention(text, spec);
  return spec;
}

DecoderSpec read_qwen3_vl(const ConfigReader& config) {
  return read_vision_language(config, {"qwen3_vl", 151655, {24, 20, 20}, true}, read_qwen3_vl_text);
}

const ArchitectureRegistration kQwen3Vl({"qwen3_vl",
                                         "Qwen3-VL: Qwen3 text model with M-RoPE and DeepStack, ViT with 2-D rotary",
                                         read_qwen3_vl,
                                         {"tie_word_embeddings", "mrope_section", "deepstack_visual_indexes"},
                                         {"Qwen3VLForConditionalGeneration"}});

}  // namespace
}  // namespace canrun
