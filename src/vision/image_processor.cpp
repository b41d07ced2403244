#include "vision/image_processor.h"

#include "vision/processor_kinds.h"

namespace canrun {

PixelValues preprocess_images(const ImageProcessorConfig& config, const std::vector<RgbImage>& images) {
  PixelValues out;
  for (const RgbImage& image : images) {
    switch (config.kind) {
      case ImageProcessorKind::kQwen2Vl: append_qwen_image(config, image, out); break;
      case ImageProcessorKind::kGemma4: append_gemma4_image(config, image, out); break;
      case ImageProcessorKind::kResizeCrop: append_resize_crop_image(config, image, out); break;
      case ImageProcessorKind::kIdefics3: append_idefics3_image(config, image, out); break;
      case ImageProcessorKind::kLlama4: append_llama4_image(config, image, out); break;
      case ImageProcessorKind::kMllama: append_mllama_image(config, image, out); break;
    }
  }
  return out;
}

}  // namespace canrun
