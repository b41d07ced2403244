// Greedy generation over a static KV cache, stopping at any eos id.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "runtime/decoder_model.h"

namespace canrun {

struct GenerationOptions {
  int64_t max_new_tokens = 32;
  std::vector<int32_t> eos_token_ids;
  int64_t cache_capacity = 0;  // 0: exactly prompt + max_new_tokens
  // Called with the logits each generated token is chosen from, before the choice.
  std::function<void(std::span<const float>)> on_logits;
};

struct GenerationResult {
  std::vector<int32_t> tokens;       // generated ids, ending with the eos id if one stopped it
  bool stopped_at_eos = false;
  std::vector<float> prompt_logits;  // logits after the last prompt token
  double prefill_seconds = 0;
  double decode_seconds = 0;         // for tokens after the first
  size_t kv_cache_bytes = 0;
};

// Throws Error(kUsage) when the prompt is empty or prompt + max_new_tokens exceeds
// the cache capacity or the model's max_position_embeddings.
GenerationResult generate_greedy(const DecoderModel& model, std::span<const int32_t> prompt,
                                 const GenerationOptions& options,
                                 const std::function<void(int32_t)>& on_token = {});

int32_t argmax(std::span<const float> values);

}  // namespace canrun
