// AVX2+FMA inner loops. Every function carries the target attribute itself (not the whole
// file's flags), so the rest of the build stays baseline x86-64 and these run only after
// linear.cpp has checked the processor.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/primitives.h"
#include "kernels/ref/ops.h"
#include "tensor/dtype.h"

#define CANRUN_AVX2 __attribute__((target("avx2,fma,f16c")))
#define CANRUN_TARGET CANRUN_AVX2
#include "kernels/cpu/panel_kernels.h"
// Loops over accumulators must be unrolled, or the accumulators live in memory, not registers.
#define UNROLLED _Pragma("GCC unroll 8")

// glibc's vector expf for AVX2 (libmvec): eight lanes, within 4 ulp.
extern "C" CANRUN_AVX2 __m256 _ZGVdN8v_expf(__m256 x);

namespace canrun::cpu {
namespace {

CANRUN_AVX2 inline float horizontal_sum(__m256 v) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(quarter, _mm_movehdup_ps(quarter)));
}

// Eight bf16 values widened to f32: bf16 is the top half of an f32.
CANRUN_AVX2 inline __m256 load_bf16(const uint16_t* src) {
  const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

CANRUN_AVX2 void widen_bf16(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load_bf16(src + i));
  for (; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
}

// Stored values, eight at a time or one, widened to f32: what the dot products and attention's
// loops read weights and cached rows through.
struct F32Values {
  using E = float;
  CANRUN_AVX2 static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static float one(float v) { return v; }
};
struct Bf16Values {
  using E = uint16_t;
  CANRUN_AVX2 static __m256 load(const uint16_t* p) { return load_bf16(p); }
  static float one(uint16_t v) { return bf16_to_f32(v); }
};
struct F16Values {
  using E = uint16_t;
  CANRUN_AVX2 static __m256 load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float one(uint16_t v) { return f16_to_f32(v); }
};

// Four independent accumulators cover the FMA latency in a single dot product (decode).
template <typename Values>
CANRUN_AVX2 float dot(const float* x, const typename Values::E* w, int64_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    UNROLLED for (int j = 0; j < 4; ++j)
      acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * j), Values::load(w + i + 8 * j), acc[j]);
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), Values::load(w + i), acc[0]);
  float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += x[i] * Values::one(w[i]);
  return sum;
}

CANRUN_AVX2 float dot_f32(const float* x, const float* w, int64_t n) { return dot<F32Values>(x, w, n); }
CANRUN_AVX2 float dot_bf16(const float* x, const uint16_t* w, int64_t n) { return dot<Bf16Values>(x, w, n); }

// The sums of eight vectors, one per lane: out lane i = the sum of v[i]'s lanes.
CANRUN_AVX2 inline __m256 lane_sums(const __m256 (&v)[8]) {
  const __m256 quads_low = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 quads_high = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(quads_low, quads_high, 0x20),
                       _mm256_permute2f128_ps(quads_low, quads_high, 0x31));
}

// Attention scores: eight cached keys at a time, one accumulator each, reduced together.
template <typename Values>
CANRUN_AVX2 void dot_rows_of(const float* x, const typename Values::E* rows, int64_t count, int64_t n, float* out) {
  const int64_t vector_end = n - n % 8;
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const typename Values::E* block = rows + i * n;
    __m256 acc[8];
    UNROLLED for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t k = 0; k < vector_end; k += 8) {
      const __m256 xv = _mm256_loadu_ps(x + k);
      UNROLLED for (int r = 0; r < 8; ++r) acc[r] = _mm256_fmadd_ps(xv, Values::load(block + r * n + k), acc[r]);
    }
    _mm256_storeu_ps(out + i, lane_sums(acc));
    for (int64_t k = vector_end; k < n; ++k)
      for (int r = 0; r < 8; ++r) out[i + r] += x[k] * Values::one(block[r * n + k]);
  }
  for (; i < count; ++i) out[i] = dot<Values>(x, rows + i * n, n);
}

// Softmax's exponentials eight at a time; the sum runs in four double lanes.
CANRUN_AVX2 double exp_shifted(float* x, int64_t n, float shift, double sum) {
  const __m256 shift_v = _mm256_set1_ps(shift);
  __m256d sums = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift_v));
    _mm256_storeu_ps(x + i, e);
    sums = _mm256_add_pd(sums, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)),
                                             _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, sums);
  sum += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  return ref::exp_shifted(x + i, n - i, shift, sum);
}

CANRUN_AVX2 void gated_silu(const float* gate, const float* up, int64_t n, float* y) {
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = _ZGVdN8v_expf(_mm256_xor_ps(g, sign));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
  }
  ref::gated_activation(Activation::kSilu, gate + i, up + i, n - i, y + i);
}

// Eight accumulators of 8 lanes (64 columns) stay in registers while the rows stream past;
// columns past the last multiple of 64 go 8 at a time, then one at a time.
template <typename Values, int Vectors>
CANRUN_AVX2 void weighted_columns(const float* weights, const typename Values::E* rows, int64_t count, int64_t n,
                                  float* out) {
  __m256 acc[Vectors];
  UNROLLED for (int v = 0; v < Vectors; ++v) acc[v] = _mm256_setzero_ps();
  for (int64_t p = 0; p < count; ++p) {
    const __m256 weight = _mm256_broadcast_ss(weights + p);
    UNROLLED for (int v = 0; v < Vectors; ++v)
      acc[v] = _mm256_fmadd_ps(weight, Values::load(rows + p * n + 8 * v), acc[v]);
  }
  UNROLLED for (int v = 0; v < Vectors; ++v) _mm256_storeu_ps(out + 8 * v, acc[v]);
}

template <typename Values>
CANRUN_AVX2 void weighted_sum_of(const float* weights, const typename Values::E* rows, int64_t count, int64_t n,
                                 float* out) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) weighted_columns<Values, 8>(weights, rows + j, count, n, out + j);
  for (; j + 8 <= n; j += 8) weighted_columns<Values, 1>(weights, rows + j, count, n, out + j);
  for (; j < n; ++j) {
    float sum = 0.0f;
    for (int64_t p = 0; p < count; ++p) sum += weights[p] * Values::one(rows[p * n + j]);
    out[j] = sum;
  }
}

CANRUN_AVX2 void dot_rows(const float* x, const void* rows, DType dtype, int64_t count, int64_t n, float* out) {
  switch (dtype) {
    case DType::kF32: return dot_rows_of<F32Values>(x, static_cast<const float*>(rows), count, n, out);
    case DType::kBF16: return dot_rows_of<Bf16Values>(x, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF16: return dot_rows_of<F16Values>(x, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF8E4M3: break;  // a weight format, never a cache's
  }
}

CANRUN_AVX2 void weighted_sum(const float* weights, const void* rows, DType dtype, int64_t count, int64_t n,
                              float* out) {
  switch (dtype) {
    case DType::kF32: return weighted_sum_of<F32Values>(weights, static_cast<const float*>(rows), count, n, out);
    case DType::kBF16: return weighted_sum_of<Bf16Values>(weights, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF16: return weighted_sum_of<F16Values>(weights, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF8E4M3: break;  // a weight format, never a cache's
  }
}

// R rows of x against C rows of w: each loaded vector feeds several FMAs, and the R * C
// accumulators are independent. One accumulator per output, so the sum order is the same
// for every block shape.
template <int R, int C>
CANRUN_AVX2 void block(const float* x, const float* w, int64_t n, float* y, int64_t ldy) {
  __m256 acc[R][C];
  UNROLLED for (int r = 0; r < R; ++r)
    UNROLLED for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m256 wv[C];
    UNROLLED for (int c = 0; c < C; ++c) wv[c] = _mm256_loadu_ps(w + c * n + k);
    UNROLLED for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * n + k);
      UNROLLED for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  // Unrolled like the loops above: an accumulator indexed at run time anywhere would keep
  // the whole array in memory, stored on every step of k.
  UNROLLED for (int r = 0; r < R; ++r)
    UNROLLED for (int c = 0; c < C; ++c) {
      float sum = horizontal_sum(acc[r][c]);
      for (int64_t i = k; i < n; ++i) sum += x[r * n + i] * w[c * n + i];
      y[r * ldy + c] = sum;
    }
}

template <int R>
CANRUN_AVX2 void row_block(const float* x, const float* w, int64_t w_rows, int64_t n, float* y, int64_t ldy) {
  constexpr int kCols = 2;
  int64_t o = 0;
  for (; o + kCols <= w_rows; o += kCols) block<R, kCols>(x, w + o * n, n, y + o, ldy);
  if (o < w_rows) block<R, 1>(x, w + o * n, n, y + o, ldy);
}

CANRUN_AVX2 void tile(const float* x, int64_t x_rows, const float* w, int64_t w_rows, int64_t n, float* y,
                      int64_t ldy) {
  constexpr int kRows = 4;
  int64_t r = 0;
  for (; r + kRows <= x_rows; r += kRows) row_block<kRows>(x + r * n, w, w_rows, n, y + r * ldy, ldy);
  for (; r < x_rows; ++r) row_block<1>(x + r * n, w, w_rows, n, y + r * ldy, ldy);
}

// The panel products at eight lanes: a panel column is two vectors.
struct Avx2Vector {
  using F = __m256;
  static constexpr int kLanes = 8;
  CANRUN_AVX2 static F zero() { return _mm256_setzero_ps(); }
  CANRUN_AVX2 static F load(const float* p) { return _mm256_load_ps(p); }
  CANRUN_AVX2 static F load(const uint16_t* p) { return load_bf16(p); }
  CANRUN_AVX2 static F broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  CANRUN_AVX2 static F splat(float value) { return _mm256_set1_ps(value); }
  CANRUN_AVX2 static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  // E4M3 bits sign-extended to 16 and moved up 7: exponent and mantissa land in f16's places
  // (bias 15 for 7, so the value read is 2^-8 of the E4M3 value, subnormals included), the sign
  // in f16's, and its copy in the exponent's top bit is cleared. 0x7f / 0xff stay NaN.
  CANRUN_AVX2 static F load_fp8(const uint8_t* p) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    const __m128i half = _mm_and_si128(_mm_slli_epi16(_mm_cvtepi8_epi16(bytes), 7),
                                       _mm_set1_epi16(static_cast<int16_t>(0xbf80)));
    const __m128i nan = _mm_cmpeq_epi8(_mm_or_si128(bytes, _mm_set1_epi8(static_cast<char>(0x80))),
                                       _mm_set1_epi8(static_cast<char>(0xff)));
    return _mm256_blendv_ps(_mm256_cvtph_ps(half), _mm256_set1_ps(__builtin_nanf("")),
                            _mm256_castsi256_ps(_mm256_cvtepi8_epi32(nan)));
  }
  CANRUN_AVX2 static F fma(F a, F b, F acc) { return _mm256_fmadd_ps(a, b, acc); }
  CANRUN_AVX2 static void store(float* p, F v) { _mm256_store_ps(p, v); }
};

}  // namespace

const Primitives& avx2_primitives() {
  static const Primitives primitives{widen_bf16,
                                     dot_f32,
                                     dot_bf16,
                                     dot_rows,
                                     exp_shifted,
                                     gated_silu,
                                     weighted_sum,
                                     tile,
                                     panel<Avx2Vector, float>,
                                     panel<Avx2Vector, uint16_t>,
                                     panels_row<Avx2Vector, float>,
                                     panels_row<Avx2Vector, uint16_t>,
                                     panel_fp8<Avx2Vector>,
                                     panels_row_fp8<Avx2Vector>};
  return primitives;
}

}  // namespace canrun::cpu
