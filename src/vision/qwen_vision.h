// The vision towers of Qwen's image-text-to-text models (models/vision_tower_spec.h): patches
// embedded by a linear map (their Conv3d), for Qwen3-VL learned positions resampled bilinearly to
// each image's grid, ViT blocks with 2-D rotary attention within each image (Qwen2.5-VL: within
// windows of it, but in its full-attention blocks), and a merger of each 2x2 group of patches
// into one text-width feature; Qwen3-VL's blocks named by deepstack_visual_indexes also give
// features through mergers of their own (DeepStack). Runs on a backend's kernel table.
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

class QwenVisionEncoder {
 public:
  // Visits the tower's tensors (under spec.prefix) in the checkpoint's order.
  QwenVisionEncoder(VisionTowerSpec spec, TensorVisitor& tensors);
  const VisionTowerSpec& spec() const { return spec_; }

  // The features of the images whose patches `pixels` holds (Qwen's processor: rows of
  // patch_width() values, grid_thw per image). Throws Error(kUsage) when they do not fit the tower.
  VisionFeatures encode(const PixelValues& pixels, const KernelTable& kernels) const;

 private:
  struct Norm {
    FloatBuffer weight, bias;  // bias empty for RMSNorm
  };
  struct Block {
    Norm norm1, norm2;
    WeightMatrix qkv, proj, gate, up, down;  // gate: Qwen2.5-VL's SwiGLU only
    FloatBuffer qkv_b, proj_b, gate_b, up_b, down_b;
  };
  struct Merger {
    Norm norm;
    WeightMatrix fc1, fc2;
    FloatBuffer fc1_b, fc2_b;
  };
  Norm visit_norm(TensorVisitor& tensors, const std::string& name, int64_t width) const;
  void visit_merger(TensorVisitor& tensors, const std::string& name, bool norm_after_shuffle, Merger& merger) const;
  void normalize(const Norm& norm, const float* x, int64_t rows, int64_t width, float* y,
                 const KernelTable& kernels) const;
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
