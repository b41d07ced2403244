// Qwen3-VL's vision tower (also Qwen3.5's): patches embedded by a linear map (its Conv3d), learned positions
// resampled bilinearly to each image's grid, ViT blocks with 2-D rotary attention within each
// image, and a merger of each 2x2 group of patches into one text-width feature; the blocks named
// by deepstack_visual_indexes also give features through mergers of their own (DeepStack).
// Runs on a backend's kernel table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_table.h"
#include "models/vision_tower_spec.h"
#include "program/tensor_visitor.h"
#include "vision/image_processor.h"

namespace canrun {

// What the tower gives the text model for a set of images.
struct VisionFeatures {
  int64_t tokens = 0;                         // merged tokens, all images one after the other
  std::vector<float> embeds;                  // [tokens, out_hidden]
  std::vector<std::vector<float>> deepstack;  // per deepstack index, [tokens, out_hidden]
};

// The tower's tensors as published (names, stored shapes), for synthetic checkpoints and plans.
std::vector<TensorInfo> vision_tower_tensors(const VisionTowerSpec& spec);

class Qwen3VisionEncoder {
 public:
  // Visits model.visual.* in the checkpoint's order.
  Qwen3VisionEncoder(VisionTowerSpec spec, TensorVisitor& tensors);
  const VisionTowerSpec& spec() const { return spec_; }

  // The features of the images whose patches `pixels` holds (Qwen's processor: rows of
  // patch_width() values, grid_thw per image). Throws Error(kUsage) when they do not fit the tower.
  VisionFeatures encode(const PixelValues& pixels, const KernelTable& kernels) const;

 private:
  struct Block {
    FloatBuffer norm1_w, norm1_b, norm2_w, norm2_b;
    WeightMatrix qkv, proj, fc1, fc2;
    FloatBuffer qkv_b, proj_b, fc1_b, fc2_b;
  };
  struct Merger {
    FloatBuffer norm_w, norm_b;
    WeightMatrix fc1, fc2;
    FloatBuffer fc1_b, fc2_b;
  };
  void visit_merger(TensorVisitor& tensors, const std::string& name, int64_t norm_width, Merger& merger);
  // [patches / merge^2, out_hidden] from [patches, hidden].
  std::vector<float> merge(const Merger& merger, bool norm_after_shuffle, const std::vector<float>& x, int64_t patches,
                           const KernelTable& kernels) const;

  VisionTowerSpec spec_;
  WeightMatrix patch_embed_;  // the Conv3d's kernel as [hidden, patch_width()]
  FloatBuffer patch_bias_, pos_embed_;
  std::vector<Block> blocks_;
  Merger merger_;
  std::vector<Merger> deepstack_mergers_;
};

}  // namespace canrun
