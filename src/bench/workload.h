// What `canrun bench` runs: prompt and output lengths drawn from distributions, a number of
// requests after a warm-up, served `concurrency` at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/prompt_lookup.h"
#include "tensor/dtype.h"

namespace canrun {

struct PixelValues;

// "128" (always 128) or "64-512" (uniform integers, both ends included).
struct LengthDistribution {
  int64_t low = 1;
  int64_t high = 1;
  std::string text() const;
};

// Throws Error(kUsage) naming `option` when `text` is not a length or range of lengths >= `minimum`.
LengthDistribution parse_lengths(std::string_view text, std::string_view option, int64_t minimum);

struct Workload {
  LengthDistribution prompt{128, 128};
  LengthDistribution output{32, 32};
  int64_t requests = 5;  // measured
  int64_t warmup = 1;    // run first, not measured
  int64_t concurrency = 1;
  // With concurrency > 1: a prompt runs in pieces of this many tokens between the others' decode
  // steps (0: at once, the others waiting).
  int64_t prefill_chunk = 256;
  uint64_t seed = 0;
  DType kv_dtype = DType::kF32;  // what each request's KV cache stores
  PromptLookup prompt_lookup;     // speculative decoding (off by default)
};

struct BenchRequest {
  std::vector<int32_t> prompt;  // token ids drawn uniformly from the vocabulary, or a given text's
  int64_t output_tokens = 0;    // generated exactly: no eos stops a bench request
  DType kv_dtype = DType::kF32;
  // The images of an image-text-to-text prompt, whose image tokens it holds; null: text only.
  std::shared_ptr<const PixelValues> pixels;
};

// The warm-up requests first, then the measured ones; the same seed gives the same requests.
std::vector<BenchRequest> make_requests(const Workload& workload, int64_t vocab_size);

// The images' part of a prompt: for the i-th image, image_token_id repeated token_counts[i] times
// (as the model's processor expands its placeholder), then one other id, image_token_id + 1,
// that ends the image's run as the processor's vision-end token does.
std::vector<int32_t> image_prompt_prefix(int32_t image_token_id, const std::vector<int64_t>& token_counts,
                                         int64_t vocab_size);

// Puts `prefix` (image_prompt_prefix) in front of every prompt, with the images' `pixels`. A drawn
// text id equal to image_token_id becomes the next id, so only the images' tokens are image tokens.
void add_images(std::vector<BenchRequest>& requests, const std::vector<int32_t>& prefix,
                std::shared_ptr<const PixelValues> pixels, int32_t image_token_id, int64_t vocab_size);

}  // namespace canrun
