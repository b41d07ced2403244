// The vision tower of an image-text-to-text checkpoint as its config describes it: the ViTs of
// Qwen2-VL, Qwen2.5-VL (RMSNorms, SwiGLU, attention within windows but in some blocks) and
// Qwen3-VL (learned positions, DeepStack; also Qwen3.5's, without DeepStack). Read from
// config.json's vision_config with transformers' defaults (models/vision_language.cpp), run by
// vision/qwen_vision.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/activation.h"

namespace canrun {

enum class VisionTowerKind { kQwen2Vl, kQwen2_5Vl, kQwen3Vl };

struct VisionTowerSpec {
  VisionTowerKind kind = VisionTowerKind::kQwen3Vl;
  std::string prefix = "model.visual.";  // "visual." in checkpoints saved before transformers 5
  int64_t depth = 27;
  int64_t hidden = 1152;
  int64_t intermediate = 4304;
  int64_t heads = 16;
  int64_t in_channels = 3;
  int64_t patch_size = 16;
  int64_t temporal_patch_size = 2;
  int64_t merge_size = 2;
  int64_t out_hidden = 3584;
  int64_t num_position_embeddings = 2304;  // a side x side grid of learned positions; 0: none
  // The blocks whose output also goes, through a merger of its own, to the text model's first
  // layers (DeepStack): the i-th listed to layer i.
  std::vector<int64_t> deepstack_indexes = {8, 16, 24};
  Activation activation = Activation::kGeluTanh;
  double rope_theta = 10000.0;
  // kQwen2_5Vl: attention within windows of window_size pixels a side, but in these blocks.
  int64_t window_size = 0;
  std::vector<int64_t> full_attention_blocks;
  int64_t head_dim() const { return hidden / heads; }
  int64_t patch_width() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
};

}  // namespace canrun
