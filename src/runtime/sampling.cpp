#include "runtime/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>

#include "kernels/top_k.h"
#include "util/error.h"

namespace canrun {
namespace {

constexpr float kRemoved = -std::numeric_limits<float>::infinity();

// exp(score - max score) per token: the softmax before its division. Throws when no score is
// finite, where transformers' softmax would give NaN probabilities.
std::vector<double> exp_weights(std::span<const float> scores) {
  const float top = scores.empty() ? kRemoved : *std::max_element(scores.begin(), scores.end());
  if (!std::isfinite(top)) fail(ErrorKind::kRuntime, "sampling: the logits have no finite largest value");
  std::vector<double> weights(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) weights[i] = std::exp(static_cast<double>(scores[i]) - top);
  return weights;
}

// 53 random bits as a double in [0, 1): the same on every platform, unlike
// std::uniform_real_distribution, whose algorithm each standard library picks.
double unit_interval(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

// A rejected value as written: 0.7, nan, inf.
std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::optional<SamplingProblem> sampling_problem(const SamplingParams& params) {
  if (!(std::isfinite(params.repetition_penalty) && params.repetition_penalty > 0))
    return SamplingProblem{"repetition_penalty", "must be > 0, got " + text(params.repetition_penalty)};
  if (!params.do_sample) return std::nullopt;
  if (!(std::isfinite(params.temperature) && params.temperature > 0))
    return SamplingProblem{"temperature", "must be > 0 to sample, got " + text(params.temperature) +
                                              " (greedy decoding does not sample)"};
  if (params.temperature < kMinTemperature)
    return SamplingProblem{"temperature", "must be at least " + text(kMinTemperature) + " to sample, got " +
                                              text(params.temperature) +
                                              " (the scores divided by it overflow; use greedy decoding instead)"};
  if (params.top_k < 0) return SamplingProblem{"top_k", "must be >= 0, got " + std::to_string(params.top_k)};
  if (!(params.top_p >= 0 && params.top_p <= 1))
    return SamplingProblem{"top_p", "must be in [0, 1], got " + text(params.top_p)};
  if (params.min_p && !(*params.min_p >= 0 && *params.min_p <= 1))
    return SamplingProblem{"min_p", "must be in [0, 1], got " + text(*params.min_p)};
  return std::nullopt;
}

void apply_repetition_penalty(std::span<float> scores, std::span<const int32_t> ids, double penalty) {
  const float factor = static_cast<float>(penalty);  // torch scales float32 scores by a float32
  std::vector<bool> seen(scores.size());
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= scores.size() || seen[id]) continue;
    seen[id] = true;
    scores[id] = scores[id] < 0 ? scores[id] * factor : scores[id] / factor;
  }
}

void apply_temperature(std::span<float> scores, double temperature) {
  const float divisor = static_cast<float>(temperature);
  for (float& score : scores) score /= divisor;
}

void apply_top_k(std::span<float> scores, int64_t top_k) {
  const size_t k = std::min(scores.size(), static_cast<size_t>(top_k));
  if (k == 0) return;
  std::vector<float> sorted(scores.begin(), scores.end());
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k - 1), sorted.end(),
                   std::greater<float>());
  const float kth = sorted[k - 1];
  for (float& score : scores)
    if (score < kth) score = kRemoved;
}

void apply_top_p(std::span<float> scores, double top_p) {
  if (scores.empty()) return;
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  // Ascending; equal scores in index order, as torch.sort keeps them on CPU.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return scores[a] < scores[b]; });
  const std::vector<double> weights = exp_weights(scores);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  const double cutoff = 1.0 - top_p;
  double cumulative = 0;
  // The removed tokens are a prefix of the ascending order; the last (most likely) one stays.
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    cumulative += weights[order[i]];
    if (cumulative / total > cutoff) break;
    scores[order[i]] = kRemoved;
  }
}

void apply_min_p(std::span<float> scores, double min_p) {
  // p_i < min_p * p_max, with both probabilities over the same sum: exp(s_i - s_max) < min_p.
  const std::vector<double> weights = exp_weights(scores);
  for (size_t i = 0; i < scores.size(); ++i)
    if (weights[i] < min_p) scores[i] = kRemoved;
}

void process_logits(std::span<float> scores, std::span<const int32_t> ids, const SamplingParams& params) {
  if (params.repetition_penalty != 1.0) apply_repetition_penalty(scores, ids, params.repetition_penalty);
  if (!params.do_sample) return;
  if (params.temperature != 1.0) apply_temperature(scores, params.temperature);
  if (params.top_k != 0) apply_top_k(scores, params.top_k);
  if (params.top_p < 1.0) apply_top_p(scores, params.top_p);
  if (params.min_p) apply_min_p(scores, *params.min_p);
}

std::vector<double> softmax_probabilities(std::span<const float> scores) {
  std::vector<double> weights = exp_weights(scores);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& weight : weights) weight /= total;
  return weights;
}

Sampler::Sampler(const SamplingParams& params) : params_(params) {
  if (const std::optional<SamplingProblem> problem = sampling_problem(params))
    fail(ErrorKind::kUsage, "sampling parameter " + problem->field + " " + problem->message);
  if (!params.do_sample) return;
  if (!params_.seed) {
    std::random_device device;
    params_.seed = (static_cast<uint64_t>(device()) << 32) | device();
  }
  engine_.seed(*params_.seed);
}

std::optional<uint64_t> Sampler::seed() const {
  if (!params_.do_sample) return std::nullopt;
  return params_.seed;
}

int32_t Sampler::next(std::span<const float> logits, std::span<const int32_t> ids) {
  if (!params_.do_sample && params_.repetition_penalty == 1.0) return top_k_indices(logits, 1).front();
  scores_.assign(logits.begin(), logits.end());
  process_logits(scores_, ids, params_);
  if (!params_.do_sample) return top_k_indices(scores_, 1).front();
  // Inverse transform: the first token whose cumulative probability passes u. Rounding can
  // leave the last cumulative sum just under u; the last token that can be drawn takes it.
  const std::vector<double> probabilities = softmax_probabilities(scores_);
  const double target = unit_interval(engine_);
  double cumulative = 0;
  int32_t last_drawable = 0;
  for (size_t i = 0; i < probabilities.size(); ++i) {
    if (probabilities[i] == 0) continue;
    cumulative += probabilities[i];
    last_drawable = static_cast<int32_t>(i);
    if (cumulative > target) return last_drawable;
  }
  return last_drawable;
}

}  // namespace canrun
