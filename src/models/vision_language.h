// Reading the config of a Qwen vision-language checkpoint (qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_5,
// qwen3_5_moe): its
// text model from text_config by the text family's own reader, placed under
// model.language_model, with M-RoPE sections and the image token; and its vision tower from
// vision_config.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

struct VisionLanguageDefaults {
  std::string model_type;  // the text spec's model_type
  int32_t image_token_id = 0;
  std::vector<int64_t> mrope_section;  // transformers' default
  bool deepstack = true;               // the tower has DeepStack mergers (Qwen3-VL's, not Qwen3.5's)
  // The tower's kind; Qwen2-VL's and Qwen2.5-VL's text models take their M-RoPE frequencies in
  // sections, the others interleaved.
  VisionTowerKind tower = VisionTowerKind::kQwen3Vl;
};

DecoderSpec read_vision_language(const ConfigReader& config, const VisionLanguageDefaults& defaults,
                                 const std::function<DecoderSpec(const ConfigReader& text)>& read_text);

}  // namespace canrun
