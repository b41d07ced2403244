// An image file as --image passes it: JPEG, PNG or WebP decoded (EXIF included), then through a
// Qwen image processor (smart resize, resampling, patches).
#include "fuzz_support.h"
#include "vision/image_loading.h"
#include "vision/image_processor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const canrun::ImageProcessorConfig config = [] {
    canrun::ImageProcessorConfig qwen;
    qwen.kind = canrun::ImageProcessorKind::kQwen2Vl;
    qwen.min_pixels = 28 * 28;
    qwen.max_pixels = 28 * 28 * 16;
    qwen.image_mean = qwen.image_std = {0.5f, 0.5f, 0.5f};
    return qwen;
  }();
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    // A small pixel cap: a header may claim any size, and the cap is what stops it.
    const canrun::RgbImage image = canrun::decode_image({data, size}, "fuzz-input", 1 << 20);
    canrun::preprocess_images(config, {image});
  });
  return 0;
}
