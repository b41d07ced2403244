// Qwen2-VL and Qwen2.5-VL (image-text-to-text): a Qwen2 text model (q/k/v biases) whose rotary
// angles take (t, h, w) positions in contiguous sections (M-RoPE), whose image tokens'
// embeddings are replaced by the vision tower's features. The towers (vision/qwen_vision):
// Qwen2-VL's LayerNorm and quick_gelu ViT; Qwen2.5-VL's RMSNorm and SwiGLU ViT attending within
// windows in most blocks. Published checkpoints keep the text fields at the top of config.json
// and name the weights model.* and visual.*; transformers 5 saves text_config, model.language_model.*
// and model.visual.*: both load.
#include "models/llama_like.h"
#include "models/registry.h"
#include "models/vision_language.h"

namespace canrun {
namespace {

DecoderSpec read_qwen2_vl_text(const ConfigReader& text) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 152064;
  defaults.hidden_size = 8192;
  defaults.intermediate_size = 29568;
  defaults.num_layers = 80;
  defaults.num_heads = 64;
  defaults.num_kv_heads = 8;
  defaults.max_positions = 32768;
  defaults.rope_theta = 1000000.0;
  DecoderSpec spec = read_llama_like_spec(text, defaults);
  spec.qkv_bias = true;
  spec.sliding_window = read_qwen_style_windows(text, spec.num_layers);
  return spec;
}

DecoderSpec read_qwen2_vl(const ConfigReader& config) {
  VisionLanguageDefaults defaults{"qwen2_vl", 151655, {16, 24, 24}, false};
  defaults.tower = VisionTowerKind::kQwen2Vl;
  return read_vision_language(config, defaults, read_qwen2_vl_text);
}

DecoderSpec read_qwen2_5_vl(const ConfigReader& config) {
  VisionLanguageDefaults defaults{"qwen2_5_vl", 151655, {16, 24, 24}, false};
  defaults.tower = VisionTowerKind::kQwen2_5Vl;
  return read_vision_language(config, defaults, read_qwen2_vl_text);
}

const std::vector<std::string> kOptions = {"use_sliding_window", "max_window_layers", "tie_word_embeddings",
                                           "mrope_section"};

const ArchitectureRegistration kQwen2Vl({"qwen2_vl",
                                         "Qwen2-VL: Qwen2 text model with M-RoPE sections, ViT with 2-D rotary",
                                         read_qwen2_vl, kOptions, {"Qwen2VLForConditionalGeneration"}});

const ArchitectureRegistration kQwen2_5Vl(
    {"qwen2_5_vl", "Qwen2.5-VL: Qwen2 text model with M-RoPE sections, ViT with window attention",
     read_qwen2_5_vl, [] {
       std::vector<std::string> options = kOptions;
       options.insert(options.end(), {"window_size", "fullatt_block_indexes"});
       return options;
     }(),
     {"Qwen2_5_VLForConditionalGeneration"}});

}  // namespace
}  // namespace canrun
