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
extern "C" CANRUN_AVX2 __m256 _ZGVdN8v_erff(__m256 x);

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

// Attention scores over a block of eight cached keys, one accumulator per (head, key) summed
// over the dims in order and reduced together by lane_sums; then the dims past the last
// multiple of eight. H query heads (n apart) share each load of a key: four keys at a time,
// so 4 H accumulators, the keys and a query vector fit AVX2's 16 registers for H = 2. Each
// score's bits are the same for every H.
template <typename Values, int H>
CANRUN_AVX2 void key_block_scores(const float* x, const typename Values::E* block, int64_t n, float* out,
                                  int64_t out_stride) {
  constexpr int kKeys = 8, kKeysAtATime = H == 1 ? 8 : 4;
  const int64_t vector_end = n - n % 8;
  __m256 sums[H][kKeys];
  for (int first = 0; first < kKeys; first += kKeysAtATime) {
    __m256 acc[H][kKeysAtATime];
    UNROLLED for (int h = 0; h < H; ++h)
      UNROLLED for (int r = 0; r < kKeysAtATime; ++r) acc[h][r] = _mm256_setzero_ps();
    for (int64_t k = 0; k < vector_end; k += 8) {
      __m256 keys[kKeysAtATime];
      UNROLLED for (int r = 0; r < kKeysAtATime; ++r) keys[r] = Values::load(block + (first + r) * n + k);
      UNROLLED for (int h = 0; h < H; ++h) {
        const __m256 xv = _mm256_loadu_ps(x + h * n + k);
        UNROLLED for (int r = 0; r < kKeysAtATime; ++r) acc[h][r] = _mm256_fmadd_ps(xv, keys[r], acc[h][r]);
      }
    }
    UNROLLED for (int h = 0; h < H; ++h)
      UNROLLED for (int r = 0; r < kKeysAtATime; ++r) sums[h][first + r] = acc[h][r];
  }
  UNROLLED for (int h = 0; h < H; ++h) {
    float* o = out + h * out_stride;
    _mm256_storeu_ps(o, lane_sums(sums[h]));
    for (int64_t k = vector_end; k < n; ++k)
      for (int r = 0; r < kKeys; ++r) o[r] += x[h * n + k] * Values::one(block[r * n + k]);
  }
}

// Keys eight at a time (key_block_scores), query heads two at a time; the last count % 8
// keys one dot product each.
template <typename Values>
CANRUN_AVX2 void dot_rows_of(const float* x, int64_t heads, const typename Values::E* rows, int64_t count, int64_t n,
                             float* out) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    int64_t h = 0;
    for (; h + 2 <= heads; h += 2) key_block_scores<Values, 2>(x + h * n, rows + i * n, n, out + h * count + i, count);
    for (; h < heads; ++h) key_block_scores<Values, 1>(x + h * n, rows + i * n, n, out + h * count + i, count);
  }
  for (; i < count; ++i)
    for (int64_t h = 0; h < heads; ++h) out[h * count + i] = dot<Values>(x + h * n, rows + i * n, n);
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

CANRUN_AVX2 void scale(float* x, int64_t n, float factor) {
  const __m256 factor_v = _mm256_set1_ps(factor);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), factor_v));
  ref::scale(x + i, n - i, factor);
}

// maxps(a, b) is `a > b ? a : b` per lane, ref's step: each lane passes over NaNs of x and
// keeps a NaN start; the lanes then combine as ref's loop would. Among equal values only the
// sign of a zero may differ from ref's, and softmax's x - max is the same for either zero.
CANRUN_AVX2 float max_of(const float* x, int64_t n, float start) {
  __m256 lanes = _mm256_set1_ps(start);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) lanes = _mm256_max_ps(_mm256_loadu_ps(x + i), lanes);
  alignas(32) float each[8];
  _mm256_store_ps(each, lanes);
  return ref::max_of(x + i, n - i, ref::max_of(each, 8, start));
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

CANRUN_AVX2 void gelu(const float* x, int64_t n, float* y) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  const __m256 inverse_sqrt2 = _mm256_set1_ps(0.70710678118654752f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 e = _ZGVdN8v_erff(_mm256_mul_ps(v, inverse_sqrt2));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e)));
  }
  ref::activation(Activation::kGelu, x + i, n - i, y + i);
}

// H heads' accumulators for 8 * Vectors columns stay in registers while the rows stream past,
// each row's vectors loaded once for the H heads; every output is one FMA chain over p.
template <typename Values, int H, int Vectors>
CANRUN_AVX2 void weighted_columns(const float* weights, int64_t count, const typename Values::E* rows, int64_t n,
                                  float* out) {
  __m256 acc[H][Vectors];
  UNROLLED for (int h = 0; h < H; ++h)
    UNROLLED for (int v = 0; v < Vectors; ++v) acc[h][v] = _mm256_setzero_ps();
  for (int64_t p = 0; p < count; ++p) {
    __m256 values[Vectors];
    UNROLLED for (int v = 0; v < Vectors; ++v) values[v] = Values::load(rows + p * n + 8 * v);
    UNROLLED for (int h = 0; h < H; ++h) {
      const __m256 weight = _mm256_broadcast_ss(weights + h * count + p);
      UNROLLED for (int v = 0; v < Vectors; ++v) acc[h][v] = _mm256_fmadd_ps(weight, values[v], acc[h][v]);
    }
  }
  UNROLLED for (int h = 0; h < H; ++h)
    UNROLLED for (int v = 0; v < Vectors; ++v) _mm256_storeu_ps(out + h * n + 8 * v, acc[h][v]);
}

// One head's columns from `j` on: 64 at a time (eight accumulators), then 32 (a 32-wide head,
// MiniLM's, in one pass over the rows instead of four), then 8, then one.
template <typename Values>
CANRUN_AVX2 void weighted_columns_from(int64_t j, const float* weights, const typename Values::E* rows, int64_t count,
                                       int64_t n, float* out) {
  for (; j + 64 <= n; j += 64) weighted_columns<Values, 1, 8>(weights, count, rows + j, n, out + j);
  for (; j + 32 <= n; j += 32) weighted_columns<Values, 1, 4>(weights, count, rows + j, n, out + j);
  for (; j + 8 <= n; j += 8) weighted_columns<Values, 1, 1>(weights, count, rows + j, n, out + j);
  for (; j < n; ++j) {
    float sum = 0.0f;
    for (int64_t p = 0; p < count; ++p) sum += weights[p] * Values::one(rows[p * n + j]);
    out[j] = sum;
  }
}

// Heads two at a time over 32 columns (8 accumulators, 4 row vectors, 2 weights), the rest
// one head at a time.
template <typename Values>
CANRUN_AVX2 void weighted_sum_of(const float* weights, int64_t heads, const typename Values::E* rows, int64_t count,
                                 int64_t n, float* out) {
  int64_t h = 0;
  for (; h + 2 <= heads; h += 2) {
    int64_t j = 0;
    for (; j + 32 <= n; j += 32)
      weighted_columns<Values, 2, 4>(weights + h * count, count, rows + j, n, out + h * n + j);
    for (int64_t g = h; g < h + 2; ++g) weighted_columns_from<Values>(j, weights + g * count, rows, count, n, out + g * n);
  }
  for (; h < heads; ++h) weighted_columns_from<Values>(0, weights + h * count, rows, count, n, out + h * n);
}

CANRUN_AVX2 void dot_rows(const float* x, int64_t heads, const void* rows, DType dtype, int64_t count, int64_t n,
                          float* out) {
  switch (dtype) {
    case DType::kF32: return dot_rows_of<F32Values>(x, heads, static_cast<const float*>(rows), count, n, out);
    case DType::kBF16: return dot_rows_of<Bf16Values>(x, heads, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF16: return dot_rows_of<F16Values>(x, heads, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF8E4M3:
    case DType::kI8:
    case DType::kI4: break;  // weight formats, never a cache's
  }
}

CANRUN_AVX2 void weighted_sum(const float* weights, int64_t heads, const void* rows, DType dtype, int64_t count,
                              int64_t n, float* out) {
  switch (dtype) {
    case DType::kF32:
      return weighted_sum_of<F32Values>(weights, heads, static_cast<const float*>(rows), count, n, out);
    case DType::kBF16:
      return weighted_sum_of<Bf16Values>(weights, heads, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF16:
      return weighted_sum_of<F16Values>(weights, heads, static_cast<const uint16_t*>(rows), count, n, out);
    case DType::kF8E4M3:
    case DType::kI8:
    case DType::kI4: break;  // weight formats, never a cache's
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
  static constexpr bool kPrefetchStreams = false;
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
  CANRUN_AVX2 static F load_i8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  // Rows 0-7: the 8 bytes' low nibbles; rows 8-15 (v = 1): their high ones; less the 8 they
  // are stored with.
  CANRUN_AVX2 static F load_i4(const uint8_t* column, int v) {
    const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(column)));
    const __m256i nibbles = _mm256_and_si256(_mm256_srli_epi32(bytes, 4 * v), _mm256_set1_epi32(0x0f));
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(nibbles, _mm256_set1_epi32(8)));
  }
  CANRUN_AVX2 static F fma(F a, F b, F acc) { return _mm256_fmadd_ps(a, b, acc); }
  CANRUN_AVX2 static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
};

}  // namespace

const Primitives& avx2_primitives() {
  static const Primitives primitives{widen_bf16,
                                     dot_f32,
                                     dot_bf16,
                                     dot_rows,
                                     {scale, max_of, exp_shifted},
                                     gated_silu,
                                     gelu,
                                     weighted_sum,
                                     tile,
                                     panel<Avx2Vector, float>,
                                     panel<Avx2Vector, uint16_t>,
                                     panels_row<Avx2Vector, float>,
                                     panels_row<Avx2Vector, uint16_t>,
                                     panel_scaled<Avx2Vector, Fp8Bytes>,
                                     panels_row_scaled<Avx2Vector, Fp8Bytes>,
                                     panel_scaled<Avx2Vector, Int8Bytes>,
                                     panels_row_scaled<Avx2Vector, Int8Bytes>,
                                     panel_scaled<Avx2Vector, Int4Bytes>,
                                     panels_row_scaled<Avx2Vector, Int4Bytes>};
  return primitives;
}

}  // namespace canrun::cpu
