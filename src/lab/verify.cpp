#include "lab/verify.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace canrun {
namespace {

bool contains(const std::vector<int32_t>& ids, int32_t id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

}  // namespace

Verdict compare_generations(const GenerationTrace& tested, const GenerationTrace& reference) {
  const size_t common = std::min(tested.tokens.size(), reference.tokens.size());
  size_t i = 0;
  while (i < common && tested.tokens[i] == reference.tokens[i]) ++i;
  Verdict verdict;
  verdict.matching_prefix_length = static_cast<int32_t>(i);
  if (i == common) {
    if (tested.tokens.size() == reference.tokens.size()) return verdict;
    verdict.status = Status::kFailMismatch;
    verdict.detail = "generated " + std::to_string(tested.tokens.size()) + " tokens, the reference " +
                     std::to_string(reference.tokens.size()) + "; the first " + std::to_string(i) + " agree";
    return verdict;
  }
  const int32_t mine = tested.tokens[i];
  const int32_t theirs = reference.tokens[i];
  if (i >= tested.top_ids.size() || i >= reference.top_ids.size())
    fail(ErrorKind::kUsage, "compare_generations: no top-5 ids recorded at position " + std::to_string(i));
  const bool close = contains(reference.top_ids[i], mine) && contains(tested.top_ids[i], theirs);
  verdict.status = close ? Status::kPassTop5 : Status::kFailMismatch;
  verdict.detail = "position " + std::to_string(i) + ": token " + std::to_string(mine) + ", reference " +
                   std::to_string(theirs) + (close ? " (each in the other's top-5)" : " (not in each other's top-5)");
  return verdict;
}

std::vector<int32_t> top_k_ids(std::span<const float> logits, int k) {
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  const size_t count = std::min(ids.size(), static_cast<size_t>(k));
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(count), ids.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  ids.resize(count);
  return ids;
}

GenerationTrace generate_traced(const DecoderModel& model, std::span<const int32_t> prompt, int64_t max_new_tokens,
                                const std::vector<int32_t>& eos_token_ids, int64_t cache_capacity) {
  if (prompt.empty()) fail(ErrorKind::kUsage, "the prompt has no tokens");
  const int64_t start = static_cast<int64_t>(prompt.size());
  if (start + max_new_tokens > model.spec().max_positions)
    fail(ErrorKind::kUsage, "prompt of " + std::to_string(start) + " tokens plus " + std::to_string(max_new_tokens) +
                                " new tokens exceeds the model's max_position_embeddings of " +
                                std::to_string(model.spec().max_positions));
  if (cache_capacity > 0 && cache_capacity < start + max_new_tokens)
    fail(ErrorKind::kUsage, "KV cache of " + std::to_string(cache_capacity) + " positions is smaller than the prompt of " +
                                std::to_string(start) + " tokens plus " + std::to_string(max_new_tokens) + " new tokens");
  KvCache cache = model.make_cache(cache_capacity > 0 ? cache_capacity : start + max_new_tokens);
  GenerationTrace trace;
  std::vector<float> logits = model.forward(prompt, 0, cache);
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    trace.top_ids.push_back(top_k_ids(logits, kTopK));
    int32_t next = trace.top_ids.back().front();
    model.communicator().broadcast(&next, 1, 0);  // the ranks of a sharded run follow rank 0
    trace.tokens.push_back(next);
    if (contains(eos_token_ids, next) || step + 1 == max_new_tokens) break;
    logits = model.forward({&next, 1}, start + step, cache);
  }
  return trace;
}

}  // namespace canrun
