// The vision tower of an image-text-to-text checkpoint as its config describes it: Qwen3-VL's
// ViT (also Qwen3.5's, without DeepStack). Read from config.json's vision_config with
// transformers' defaults (models/vision_language.cpp), run by vision/qwen3_vision.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/activation.h"

namespace canrun {

struct VisionTowerSpec {
  int64_t depth = 27;
  int64_t hidden = 1152;
  int64_t intermediate = 4304;
  int64_t heads = 16;
  int64_t in_channels = 3;
  int64_t patch_size = 16;
  int64_t temporal_patch_size = 2;
  int64_t merge_size = 2;
  int64_t out_hidden = 3584;
  int64_t num_position_embeddings = 2304;
  // The blocks whose output also goes, through a merger of its own, to the text model's first
  // layers (DeepStack): the i-th listed to layer i.
  std::vector<int64_t> deepstack_indexes = {8, 16, 24};
  Activation activation = Activation::kGeluTanh;
  double rope_theta = 10000.0;
  int64_t head_dim() const { return hidden / heads; }
  int64_t patch_width() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
};

}  // namespace canrun
