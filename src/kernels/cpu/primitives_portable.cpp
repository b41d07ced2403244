// Plain C++ inner loops, for processors without AVX2+FMA: eight partial sums per dot product
// so the adds do not wait on each other.
#include "kernels/cpu/primitives.h"

#include <algorithm>
#include <vector>

#include "kernels/ref/ops.h"
#include "tensor/dtype.h"
#include "tensor/fp8.h"
#include "tensor/packed_int.h"

namespace canrun::cpu {
namespace {

constexpr int64_t kLanes = 8;

template <typename W>
float widened(W value) {
  if constexpr (sizeof(W) == 2)
    return bf16_to_f32(value);
  else
    return value;
}

template <typename W>
float dot(const float* x, const W* w, int64_t n) {
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t lane = 0; lane < kLanes; ++lane) partial[lane] += x[i + lane] * widened(w[i + lane]);
  float sum =
      ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  for (; i < n; ++i) sum += x[i] * widened(w[i]);
  return sum;
}

// Cached rows of `dtype` as f32: in place for f32, else widened into a per-thread buffer.
const float* f32_rows(const void* rows, DType dtype, int64_t count) {
  if (dtype == DType::kF32) return static_cast<const float*>(rows);
  thread_local std::vector<float> widened_rows;
  widened_rows.resize(static_cast<size_t>(count));
  widen_to_f32(dtype, static_cast<const std::byte*>(rows), widened_rows.size(), widened_rows.data());
  return widened_rows.data();
}

void weighted_sum(const float* weights, int64_t heads, const void* stored, DType dtype, int64_t count, int64_t n,
                  float* out) {
  const float* rows = f32_rows(stored, dtype, count * n);
  std::fill_n(out, heads * n, 0.0f);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t p = 0; p < count; ++p)
      for (int64_t j = 0; j < n; ++j) out[h * n + j] += weights[h * count + p] * rows[p * n + j];
}

void widen_bf16(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
}

float dot_f32(const float* x, const float* w, int64_t n) { return dot(x, w, n); }
void dot_rows(const float* x, int64_t heads, const void* stored, DType dtype, int64_t count, int64_t n, float* out) {
  const float* rows = f32_rows(stored, dtype, count * n);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < count; ++i) out[h * count + i] = dot(x + h * n, rows + i * n, n);
}
float dot_bf16(const float* x, const uint16_t* w, int64_t n) { return dot(x, w, n); }

void tile(const float* x, int64_t x_rows, const float* w, int64_t w_rows, int64_t n, float* y, int64_t ldy) {
  for (int64_t r = 0; r < x_rows; ++r)
    for (int64_t o = 0; o < w_rows; ++o) y[r * ldy + o] = dot(x + r * n, w + o * n, n);
}

// rows_per_block only shapes the vector kernels' register use; plain loops ignore it.
template <typename W>
void panel(const float* x, int64_t x_rows, int64_t n, const W* w, int64_t width, float* y, int64_t ldy, int) {
  for (int64_t r = 0; r < x_rows; ++r) {
    float acc[16] = {};
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < 16; ++j) acc[j] += x[r * n + k] * widened(w[k * 16 + j]);
    for (int64_t j = 0; j < width; ++j) y[r * ldy + j] = acc[j];
  }
}

template <typename W>
void panels_row(const float* x, int64_t n, const W* panels, int64_t count, int64_t outputs, float* y) {
  for (int64_t q = 0; q < count; ++q)
    panel(x, 1, n, panels + q * 16 * n, std::min<int64_t>(16, outputs - q * 16), y + q * 16, 0, 1);
}

// Weight j of a panel's column of 16 at `column`.
float fp8_value(const uint8_t* column, int64_t j) { return fp8_e4m3_to_f32(column[j]); }
float int8_value(const uint8_t* column, int64_t j) { return static_cast<float>(static_cast<int8_t>(column[j])); }
float int4_value_at(const uint8_t* column, int64_t j) {
  return static_cast<float>(((column[j % 8] >> (4 * (j / 8))) & 0xf) - 8);
}

template <float (*value)(const uint8_t*, int64_t), int64_t kColumnBytes>
void panel_scaled(const float* x, int64_t x_rows, int64_t n, const uint8_t* w, const float* scales,
                  int64_t block_cols, int64_t width, float* y, int64_t ldy, int) {
  for (int64_t r = 0; r < x_rows; ++r) {
    float acc[16] = {};
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < 16; ++j)
        acc[j] += x[r * n + k] * (value(w + k * kColumnBytes, j) * scales[k / block_cols * 16 + j]);
    for (int64_t j = 0; j < width; ++j) y[r * ldy + j] = acc[j];
  }
}

template <float (*value)(const uint8_t*, int64_t), int64_t kColumnBytes>
void panels_row_scaled(const float* x, int64_t n, const uint8_t* panels, const float* scales, int64_t block_cols,
                       int64_t count, int64_t outputs, float* y) {
  const int64_t panel_scales = (n + block_cols - 1) / block_cols * 16;
  for (int64_t q = 0; q < count; ++q)
    panel_scaled<value, kColumnBytes>(x, 1, n, panels + q * kColumnBytes * n, scales + q * panel_scales, block_cols,
                                      std::min<int64_t>(16, outputs - q * 16), y + q * 16, 0, 1);
}

void gated_silu(const float* gate, const float* up, int64_t n, float* y) {
  ref::gated_activation(Activation::kSilu, gate, up, n, y);
}

void gelu(const float* x, int64_t n, float* y) { ref::activation(Activation::kGelu, x, n, y); }

}  // namespace

const Primitives& portable_primitives() {
  static const Primitives primitives{widen_bf16, dot_f32, dot_bf16, dot_rows, ref::kSoftmaxLoops, gated_silu,
                                     gelu, weighted_sum, tile,
                                     panel<float>, panel<uint16_t>, panels_row<float>, panels_row<uint16_t>,
                                     panel_scaled<fp8_value, 16>, panels_row_scaled<fp8_value, 16>,
                                     panel_scaled<int8_value, 16>, panels_row_scaled<int8_value, 16>,
                                     panel_scaled<int4_value_at, 8>, panels_row_scaled<int4_value_at, 8>};
  return primitives;
}

const Primitives& primitives_for(InstructionSet set) {
  switch (set) {
    case InstructionSet::kPortable: return portable_primitives();
    case InstructionSet::kAvx2Fma: return avx2_primitives();
    case InstructionSet::kAvx512: return avx512_primitives();
    case InstructionSet::kAvx512Bf16: return avx512_bf16_primitives();
  }
  return portable_primitives();
}

const Primitives& primitives() {
  static const Primitives& chosen = primitives_for(chosen_instruction_set());
  return chosen;
}

}  // namespace canrun::cpu
