// Choosing the next token from a position's logits as transformers' generate does (5.23): its
// logits processors in its order, then the argmax (greedy) or a seeded draw from the softmax.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace canrun {

// transformers' GenerationConfig fields of the same names, with its defaults: greedy.
struct SamplingParams {
  bool do_sample = false;
  double temperature = 1.0;         // 1.0: no temperature step
  int64_t top_k = 50;               // 0: no top-k step
  double top_p = 1.0;               // 1.0: no top-p step
  std::optional<double> min_p;      // none: no min-p step
  double repetition_penalty = 1.0;  // 1.0: no penalty; applies when greedy too, as in transformers
  std::optional<uint64_t> seed;     // none: a fresh one from std::random_device
};

// The lowest temperature that samples. transformers divides the float32 scores by it, and below
// about |score| / 3.4e38 a score turns infinite and the softmax NaN (logits / 1e-300 does); vLLM
// raises temperatures under 0.01 to 0.01 for the same reason. canrun refuses them instead: a
// temperature that small samples like greedy decoding (temperature 0) anyway.
constexpr double kMinTemperature = 0.01;

// A sampling parameter out of range: the field (as transformers and OpenAI's API name it) and
// what is wrong with its value.
struct SamplingProblem {
  std::string field;
  std::string message;
};

// The first parameter that cannot be used, or none. Greedy decoding reads only
// repetition_penalty. The one check of every caller (CLI, generation_config.json, server).
std::optional<SamplingProblem> sampling_problem(const SamplingParams& params);

// The processors, each editing a position's scores (float32, as transformers' are) in place.
// Removed tokens get -inf. transformers keeps at least min_tokens_to_keep tokens, which is 1
// without beam search; that is the value here.

// Every id that occurs in `ids` (at most once each): a score s becomes s * penalty when
// negative, else s / penalty. Ids outside the scores are ignored.
void apply_repetition_penalty(std::span<float> scores, std::span<const int32_t> ids, double penalty);
void apply_temperature(std::span<float> scores, double temperature);
// Removes the scores below the k-th largest (ties with it stay).
void apply_top_k(std::span<float> scores, int64_t top_k);
// Sorts ascending and removes the tokens whose cumulative probability, summed from the least
// likely, is <= 1 - top_p; the most likely token always stays.
void apply_top_p(std::span<float> scores, double top_p);
// Removes the tokens whose probability is below min_p times the largest probability.
void apply_min_p(std::span<float> scores, double min_p);

// The processors `params` enables, in transformers' order: repetition penalty; then, sampling,
// temperature, top-k, top-p, min-p.
void process_logits(std::span<float> scores, std::span<const int32_t> ids, const SamplingParams& params);

// The softmax of processed scores, in double: the probabilities a sampled token is drawn with.
std::vector<double> softmax_probabilities(std::span<const float> scores);

// Chooses the tokens of one generation. Not thread-safe: one per request.
class Sampler {
 public:
  // Throws Error(kUsage) naming the parameter when sampling_problem finds one.
  explicit Sampler(const SamplingParams& params);

  // The seed the draws come from (the given one or the fresh one); nullopt when greedy.
  std::optional<uint64_t> seed() const;

  // The next id after a position with these logits, `ids` being every id so far (prompt and
  // generated): the repetition penalty looks at them. Greedy without a penalty is exactly
  // top_k_indices(logits, 1), the first maximum.
  int32_t next(std::span<const float> logits, std::span<const int32_t> ids);

 private:
  SamplingParams params_;
  std::mt19937_64 engine_;
  std::vector<float> scores_;  // the processed copy of the logits
};

}  // namespace canrun
