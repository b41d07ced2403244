#include "kernels/cpu/attention.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"
#include "util/aligned_buffer.h"

namespace canrun::cpu {
namespace {

constexpr int64_t kPanel = 16;  // the panel primitives' width
// Queries of a head per tile: their scores over 512 positions are 64 KiB, in L2 while the
// values' panels pass over them.
constexpr int64_t kTileQueries = 32;
// Below this many multiply-adds of q·k an attention stays on the calling thread (ref's threshold).
constexpr int64_t kParallelWork = 1 << 16;

int64_t panels_of(int64_t n) { return (n + kPanel - 1) / kPanel; }

// Keys as the scores' panels: panel b holds positions 16b..16b+15 column by column, out[(b *
// dim + k) * 16 + l] = key(16b + l)[k], zero past `count`.
void pack_keys(const float* keys, int64_t dim, int64_t count, float* out) {
  for (int64_t b = 0; b < panels_of(count); ++b)
    for (int64_t l = 0; l < kPanel; ++l) {
      const int64_t position = b * kPanel + l;
      float* column = out + b * dim * kPanel + l;
      for (int64_t k = 0; k < dim; ++k) column[k * kPanel] = position < count ? keys[position * dim + k] : 0.0f;
    }
}

// Values as the output's panels: panel c holds value dims 16c..16c+15 position by position,
// out[(c * count + p) * 16 + l] = value(p)[16c + l], zero past `dim`.
void pack_values(const float* values, int64_t dim, int64_t count, float* out) {
  for (int64_t c = 0; c < panels_of(dim); ++c)
    for (int64_t p = 0; p < count; ++p)
      for (int64_t l = 0; l < kPanel; ++l) {
        const int64_t d = c * kPanel + l;
        out[(c * count + p) * kPanel + l] = d < dim ? values[p * dim + d] : 0.0f;
      }
}

// The positions query position `position` sees, first and last, of `count`.
struct Visible {
  int64_t first, last;
};
Visible visible(const AttentionArgs& a, int64_t position, int64_t count) {
  if (a.window == 0) return {0, count - 1};
  return {std::max<int64_t>(0, position - a.window + 1), std::min(count - 1, position + a.window - 1)};
}

}  // namespace

bool attends_in_tiles(const AttentionArgs& a) {
  return !a.causal && a.chunk == 0 && a.keep == nullptr && a.sinks == nullptr && a.keys.dtype == DType::kF32 &&
         a.values.dtype == DType::kF32;
}

void attention_in_tiles(const AttentionArgs& a) {
  const Primitives& p = primitives();
  const int64_t count = a.start + a.tokens, group = a.heads / a.kv_heads;
  const int64_t key_dim = a.keys.dim, value_dim = a.values.dim;
  const int64_t q_width = a.heads * key_dim, out_width = a.heads * value_dim;
  const int64_t key_panels = panels_of(count) * kPanel * key_dim, value_panels = panels_of(value_dim) * kPanel * count;
  const int64_t per_kv_head = key_panels + value_panels;
  // Kept per calling thread, as the bf16 rows of a product are (linear.cpp).
  thread_local AlignedBuffer buffer;
  float* packed = reinterpret_cast<float*>(
      buffer.reserve(a.kv_heads * per_kv_head * static_cast<int64_t>(sizeof(float)), "attention panels"));
  const int64_t tiles = (a.tokens + kTileQueries - 1) / kTileQueries;
  const int64_t work = a.tokens * a.heads * count * key_dim;
#pragma omp parallel if (work > kParallelWork)
  {
#pragma omp for schedule(static)
    for (int64_t kv_head = 0; kv_head < a.kv_heads; ++kv_head) {
      float* panels = packed + kv_head * per_kv_head;
      pack_keys(static_cast<const float*>(a.keys.data) + kv_head * a.key_stride, key_dim, count, panels);
      pack_values(static_cast<const float*>(a.values.data) + kv_head * a.value_stride, value_dim, count,
                  panels + key_panels);
    }
    std::vector<float> queries(kTileQueries * key_dim), scores(kTileQueries * panels_of(count) * kPanel);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t h = 0; h < a.heads; ++h) {
      for (int64_t tile = 0; tile < tiles; ++tile) {
        const int64_t t0 = tile * kTileQueries, rows = std::min(kTileQueries, a.tokens - t0);
        const float* key_panel = packed + h / group * per_kv_head;
        const float* value_panel = key_panel + key_panels;
        for (int64_t i = 0; i < rows; ++i)
          std::copy_n(a.q + (t0 + i) * q_width + h * key_dim, key_dim, queries.data() + i * key_dim);
        // The tile's scores over the whole panels that hold any position one of its queries sees.
        const int64_t first_panel = visible(a, a.start + t0, count).first / kPanel;
        const int64_t end = std::min(count, (visible(a, a.start + t0 + rows - 1, count).last / kPanel + 1) * kPanel);
        const int64_t base = first_panel * kPanel, width = end - base;
        for (int64_t b = first_panel; b * kPanel < end; ++b)
          p.panel_f32(queries.data(), rows, key_dim, key_panel + b * key_dim * kPanel, std::min(kPanel, end - b * kPanel),
                      scores.data() + (b - first_panel) * kPanel, width, p.rows_per_block);
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t position = a.start + t0 + i;
          const Visible seen = visible(a, position, count);
          float* row = scores.data() + i * width;
          float* own = row + seen.first - base;
          const int64_t own_count = seen.last - seen.first + 1;
          p.softmax_loops.scale(own, own_count, a.scale);
          if (a.position_bias != nullptr) {
            const float* bias =
                a.position_bias + h * (2 * a.bias_span - 1) + seen.first - position + a.bias_span - 1;
            for (int64_t j = 0; j < own_count; ++j) own[j] += bias[j];
          }
          ref::normalize_scores(own, own_count, a.softcap, nullptr, p.softmax_loops);
          std::fill(row, own, 0.0f);
          std::fill(own + own_count, row + width, 0.0f);
        }
        for (int64_t c = 0; c * kPanel < value_dim; ++c)
          p.panel_f32(scores.data(), rows, width, value_panel + (c * count + base) * kPanel,
                      std::min(kPanel, value_dim - c * kPanel), a.out + t0 * out_width + h * value_dim + c * kPanel,
                      out_width, p.rows_per_block);
      }
    }
  }
}

void attend(const float* q, int64_t heads, const CachedRows& keys, const CachedRows& values, int64_t first,
            int64_t last, const ScoreTerms& terms, float* scratch, float* out) {
  const Primitives& p = primitives();
  const int64_t count = last - first + 1;
  p.dot_rows(q, heads, keys.row(first), keys.dtype, count, keys.dim, scratch);
  for (int64_t h = 0; h < heads; ++h) {
    float* scores = scratch + h * count;
    p.softmax_loops.scale(scores, count, terms.scale);
    if (terms.bias != nullptr) {
      const float* bias = terms.bias + h * terms.bias_stride;
      for (int64_t i = 0; i < count; ++i) scores[i] += bias[i];
    }
    ref::normalize_scores(scores, count, terms.softcap, terms.sinks == nullptr ? nullptr : terms.sinks + h,
                          p.softmax_loops, terms.keep);
  }
  p.weighted_sum(scratch, heads, values.row(first), values.dtype, count, values.dim, out);
}

}  // namespace canrun::cpu
