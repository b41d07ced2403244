#include "runtime/generate.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "util/error.h"

namespace canrun {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Rank 0 chooses and every rank continues with its choice, so the ranks of a sharded run
// never diverge.
int32_t choose(const DecoderModel& model, std::span<const float> logits, const GenerationOptions& options) {
  if (options.on_logits) options.on_logits(logits);
  int32_t next = argmax(logits);
  model.communicator().broadcast(&next, 1, 0);
  return next;
}

}  // namespace

int32_t argmax(std::span<const float> values) {
  // First maximum wins, as torch.argmax does.
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

GenerationResult generate_greedy(const DecoderModel& model, std::span<const int32_t> prompt,
                                 const GenerationOptions& options, const std::function<void(int32_t)>& on_token) {
  const int64_t prompt_length = static_cast<int64_t>(prompt.size());
  if (prompt_length == 0) fail(ErrorKind::kUsage, "the prompt has no tokens");
  if (options.max_new_tokens < 0) fail(ErrorKind::kUsage, "--max-new-tokens must not be negative");
  const int64_t needed = prompt_length + options.max_new_tokens;
  const int64_t capacity = options.cache_capacity > 0 ? options.cache_capacity : needed;
  if (needed > capacity)
    fail(ErrorKind::kUsage, "prompt of " + std::to_string(prompt_length) + " tokens plus --max-new-tokens " +
                                std::to_string(options.max_new_tokens) + " needs " + std::to_string(needed) +
                                " positions, more than the KV cache of " + std::to_string(capacity) +
                                " (--cache-tokens)");
  if (needed > model.spec().max_positions)
    fail(ErrorKind::kUsage, "prompt of " + std::to_string(prompt_length) + " tokens plus --max-new-tokens " +
                                std::to_string(options.max_new_tokens) + " exceeds the model's " +
                                "max_position_embeddings of " + std::to_string(model.spec().max_positions));

  GenerationResult result;
  KvCache cache = model.make_cache(capacity);
  result.kv_cache_bytes = cache.bytes();

  const auto prefill_start = std::chrono::steady_clock::now();
  result.prompt_logits = model.forward(prompt, 0, cache);
  result.prefill_seconds = seconds_since(prefill_start);
  if (options.max_new_tokens == 0) return result;

  const auto decode_start = std::chrono::steady_clock::now();
  int32_t next = choose(model, result.prompt_logits, options);
  for (int64_t step = 0;; ++step) {
    result.tokens.push_back(next);
    if (on_token) on_token(next);
    const auto& eos = options.eos_token_ids;
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) {
      result.stopped_at_eos = true;
      break;
    }
    if (static_cast<int64_t>(result.tokens.size()) == options.max_new_tokens) break;
    const int64_t position = prompt_length + step;
    std::vector<float> logits;
    if (model.recompute_before(position)) {
      std::vector<int32_t> sequence(prompt.begin(), prompt.end());
      sequence.insert(sequence.end(), result.tokens.begin(), result.tokens.end());
      logits = model.forward(sequence, 0, cache);
    } else {
      logits = model.forward({&next, 1}, position, cache);
    }
    next = choose(model, logits, options);
  }
  result.decode_seconds = seconds_since(decode_start);
  return result;
}

}  // namespace canrun
