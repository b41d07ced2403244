#include "blocks/attention_indexer.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "kernels/top_k.h"
#include "program/step_context.h"

namespace canrun {

int declare_indexer(ProgramBuilder& program, const std::string& name, int64_t key_dim) {
  return program.state(
      {name, [=](const StateShape& shape) { return shape.capacity * key_dim * static_cast<int64_t>(sizeof(float)); },
       [=](const StateShape& shape) { return std::make_unique<IndexerState>(key_dim, shape.capacity); }});
}

void IndexerStep::run(StepContext& c) const {
  IndexerState& state = c.state().get<IndexerState>(slot_);
  float* q = c.value(inputs()[0]);
  float* k = c.value(inputs()[1]);
  const float* weights = c.value(inputs()[2]);
  const float* table = c.value(inputs()[3]);
  const int64_t rotary_dim = c.width(inputs()[3]);
  for (int64_t t = 0; t < c.count(); ++t) {
    const float* cos = table + t * rotary_dim;
    const float* sin = cos + rotary_dim / 2;
    const auto rotate = rope_pairs_ ? c.kernels().rotary_pairs : c.kernels().rotary_halves;
    rotate(q + t * heads_ * dim_, heads_, dim_, rope_dim_, cos, sin);
    rotate(k + t * dim_, 1, dim_, rope_dim_, cos, sin);
    std::copy_n(k + t * dim_, dim_, state.key(c.start() + t));
  }
  state.start_run(c.count());
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim_));
  const double head_scale = 1.0 / std::sqrt(static_cast<double>(heads_));
  std::vector<float> scores;
  for (int64_t t = 0; t < c.count(); ++t) {
    const int64_t seen = c.start() + t + 1;
    uint8_t* keep = state.keep_row(t);
    if (seen <= top_k_) {
      std::fill_n(keep, seen, uint8_t{1});
      continue;
    }
    scores.assign(static_cast<size_t>(seen), 0.0f);
    for (int64_t p = 0; p < seen; ++p) {
      const float* key = state.key(p);
      double score = 0.0;
      for (int64_t h = 0; h < heads_; ++h) {
        const float* query = q + (t * heads_ + h) * dim_;
        double dot = 0.0;
        for (int64_t d = 0; d < dim_; ++d) dot += static_cast<double>(query[d]) * key[d];
        score += weights[t * heads_ + h] * head_scale * std::max(0.0, dot * scale);
      }
      scores[p] = static_cast<float>(score);
    }
    for (int32_t p : top_k_indices(scores, top_k_)) keep[p] = 1;
  }
}

StepCost IndexerStep::cost(const Program&, const RunShape& shape) const {
  return {2 * shape.tokens * heads_ * dim_ * shape.positions, 0};
}

}  // namespace canrun
