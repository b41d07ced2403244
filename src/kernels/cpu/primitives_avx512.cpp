// AVX-512 inner loops, two sets. x86_64-avx512: the panel products 16 lanes wide (one vector
// per panel column, four panels per decode pass), the same bits as AVX2's; the other loops
// are AVX2's. x86_64-avx512-bf16: the same, but bf16 panels multiply with vdpbf16ps, which
// takes both operands in bf16: each row of x is rounded to bf16 (round to nearest even) and a
// pair of inputs is summed into f32 per instruction, with denormals flushed to zero. Results
// differ from the f32 products by the rounding of x, about 2^-8 of sum|x*w| at most.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/primitives.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's _mm512_undefined_* (a variable initialised with itself) trips this warning.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define CANRUN_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))
#define CANRUN_AVX512_BF16 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16")))
#define CANRUN_TARGET CANRUN_AVX512
#include "kernels/cpu/panel_kernels.h"

namespace canrun::cpu {
namespace {

struct Avx512Vector {
  using F = __m512;
  static constexpr int kLanes = 16;
  static constexpr bool kPrefetchStreams = true;
  CANRUN_AVX512 static F zero() { return _mm512_setzero_ps(); }
  // WeightMatrix asks panels to be only 32-byte aligned, so a 64-byte column may straddle a line.
  CANRUN_AVX512 static F load(const float* p) { return _mm512_loadu_ps(p); }
  CANRUN_AVX512 static F load(const uint16_t* p) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
  }
  CANRUN_AVX512 static F broadcast(const float* p) { return _mm512_set1_ps(*p); }
  CANRUN_AVX512 static F splat(float value) { return _mm512_set1_ps(value); }
  CANRUN_AVX512 static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  // E4M3 bits sign-extended to 16 and moved up 7: exponent and mantissa land in f16's places
  // (bias 15 for 7, so the value read is 2^-8 of the E4M3 value, subnormals included), the sign
  // in f16's, and its copy in the exponent's top bit is cleared. 0x7f / 0xff stay NaN.
  CANRUN_AVX512 static F load_fp8(const uint8_t* p) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i half = _mm256_and_si256(_mm256_slli_epi16(_mm256_cvtepi8_epi16(bytes), 7),
                                          _mm256_set1_epi16(static_cast<int16_t>(0xbf80)));
    const __mmask16 nan = _mm_cmpeq_epi8_mask(_mm_or_si128(bytes, _mm_set1_epi8(static_cast<char>(0x80))),
                                              _mm_set1_epi8(static_cast<char>(0xff)));
    return _mm512_mask_mov_ps(_mm512_cvtph_ps(half), nan, _mm512_set1_ps(__builtin_nanf("")));
  }
  CANRUN_AVX512 static F load_i8(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  // The 8 bytes, then the same shifted down 4: as 32-bit lanes, their low 4 bits are rows 0-7's
  // and 8-15's nibbles, which index a table of the 16 values (the permute reads no more bits).
  CANRUN_AVX512 static F load_i4(const uint8_t* column, int) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(column));
    const __m512i nibbles = _mm512_cvtepu8_epi32(_mm_unpacklo_epi64(bytes, _mm_srli_epi16(bytes, 4)));
    const __m512 values = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
    return _mm512_permutexvar_ps(nibbles, values);
  }
  CANRUN_AVX512 static F fma(F a, F b, F acc) { return _mm512_fmadd_ps(a, b, acc); }
  CANRUN_AVX512 static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
};

// ---- bf16 products (vdpbf16ps) ----

CANRUN_AVX512_BF16 void round_rows_bf16(const float* x, int64_t rows, int64_t n, uint16_t* out) {
  const int64_t stride = rounded_row_stride(n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < stride; k += 16) {
      const __mmask16 valid = n - k >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - k)) - 1);
      const __m256bh rounded = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(valid, x + r * n + k));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * stride + k), (__m256i)rounded);
    }
}

// Inputs k and k + 1 (k even) of a rounded row as one 32-bit word, what vdpbf16ps multiplies
// a weight pair with; past the row's end, zeros.
inline uint32_t input_pair(const uint16_t* row, int64_t k) {
  uint32_t word;
  std::memcpy(&word, row + k, sizeof(word));
  return word;
}

// The weights of inputs k and k + 1 of a panel's 16 rows as 16 pairs (row j: w[k][j], w[k+1][j]);
// for the last input of an odd count, (w[k][j], 0).
CANRUN_AVX512_BF16 inline __m512i panel_pairs(const uint16_t* panel, int64_t k, int64_t n) {
  if (k + 1 == n)
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + k * 16)));
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                              6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(interleave, _mm512_loadu_si512(panel + k * 16));
}

CANRUN_AVX512_BF16 inline __m512 dot_pairs(__m512 acc, __m512i weights, uint32_t x_pair) {
  return _mm512_dpbf16_ps(acc, (__m512bh)weights, (__m512bh)_mm512_set1_epi32(static_cast<int>(x_pair)));
}

// The first `width` (1 to 16) lanes of acc to y in one masked store (a copy loop became a
// call to memmove, 1% of a prefill).
CANRUN_AVX512_BF16 inline void store_outputs(__m512 acc, int64_t width, float* y) {
  _mm512_mask_storeu_ps(y, static_cast<__mmask16>((1u << width) - 1), acc);
}

// Each output sums its input pairs in two chains, the pairs starting at k = 0, 4, 8, ... and
// at k = 2, 6, 10, ..., added at the end: vdpbf16ps's latency is longer than an FMA's, and
// one chain per row would wait on it. Every block shape and row count keeps that order.
constexpr int kChains = 2;

// R rounded rows of x (`stride` apart) against P consecutive panels: each broadcast input
// pair feeds P panels. With `next`, also asks the cache for the P panels that follow, the two
// lines of each that match each step's two (panel_block's reason).
template <int P, int R>
CANRUN_AVX512_BF16 void pairs_block(const uint16_t* x, int64_t stride, int64_t n, const uint16_t* panels,
                                    int64_t outputs, float* y, int64_t ldy, const uint16_t* next) {
  __m512 acc[P][R][kChains];
  CANRUN_UNROLLED for (int p = 0; p < P; ++p)
    CANRUN_UNROLLED for (int r = 0; r < R; ++r) acc[p][r][0] = acc[p][r][1] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    __m512i w0[P], w1[P];
    CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
      if (next) {
        __builtin_prefetch(next + p * 16 * n + k * 16, 0, 2);
        __builtin_prefetch(next + p * 16 * n + k * 16 + 32, 0, 2);
      }
      w0[p] = panel_pairs(panels + p * 16 * n, k, n);
      w1[p] = panel_pairs(panels + p * 16 * n, k + 2, n);
    }
    CANRUN_UNROLLED for (int r = 0; r < R; ++r) {
      const uint32_t x0 = input_pair(x + r * stride, k), x1 = input_pair(x + r * stride, k + 2);
      CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
        acc[p][r][0] = dot_pairs(acc[p][r][0], w0[p], x0);
        acc[p][r][1] = dot_pairs(acc[p][r][1], w1[p], x1);
      }
    }
  }
  for (; k < n; k += 2) {  // at most two more pairs, the first in chain 0
    const int chain = static_cast<int>(k % 4 / 2);
    CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
      const __m512i w = panel_pairs(panels + p * 16 * n, k, n);
      CANRUN_UNROLLED for (int r = 0; r < R; ++r) {
        if (chain == 0) acc[p][r][0] = dot_pairs(acc[p][r][0], w, input_pair(x + r * stride, k));
        else acc[p][r][1] = dot_pairs(acc[p][r][1], w, input_pair(x + r * stride, k));
      }
    }
  }
  CANRUN_UNROLLED for (int p = 0; p < P; ++p)
    CANRUN_UNROLLED for (int r = 0; r < R; ++r)
      store_outputs(_mm512_add_ps(acc[p][r][0], acc[p][r][1]), std::min<int64_t>(16, outputs - p * 16),
                    y + r * ldy + p * 16);
}

// Every row of x against P panels, R rows at a time for each R the block allows.
template <int P>
CANRUN_AVX512_BF16 void pairs_rows(const uint16_t* x, int64_t x_rows, int64_t n, const uint16_t* panels,
                                   int64_t outputs, float* y, int64_t ldy, int rows_per_block) {
  const int64_t stride = rounded_row_stride(n);
  int64_t r = 0;
  const auto run = [&]<int R>() {
    for (; r + R <= x_rows; r += R)
      pairs_block<P, R>(x + r * stride, stride, n, panels, outputs, y + r * ldy, ldy,
                        r == 0 ? panels + P * 16 * n : nullptr);
  };
  if (rows_per_block >= 8) run.template operator()<8>();
  if (rows_per_block >= 6) run.template operator()<6>();
  if (rows_per_block >= 4) run.template operator()<4>();
  if (rows_per_block >= 2) run.template operator()<2>();
  run.template operator()<1>();
}

// Two panels at a time where their accumulators fit the 32 registers with the weights (up to
// 6 rows: 24 accumulators), which halves the broadcasts per product (measured about 4% faster
// in the inner loop than one panel of 6 or 8 rows on a Zen 4); one panel of 8 rows otherwise.
CANRUN_AVX512_BF16 void panel_bf16_products(const uint16_t* x, int64_t x_rows, int64_t n, const uint16_t* panels,
                                            int64_t count, int64_t outputs, float* y, int64_t ldy,
                                            int rows_per_block) {
  int64_t q = 0;
  if (rows_per_block <= 6)
    for (; q + 2 <= count; q += 2)
      pairs_rows<2>(x, x_rows, n, panels + q * 16 * n, outputs - q * 16, y + q * 16, ldy, rows_per_block);
  for (; q < count; ++q)
    pairs_rows<1>(x, x_rows, n, panels + q * 16 * n, outputs - q * 16, y + q * 16, ldy, rows_per_block);
}

// One rounded row against P consecutive panels, P weight streams in flight, each prefetched
// ahead (kStreamPrefetchBytes); the chains of pairs_block, so the bits are its bits.
template <int P>
CANRUN_AVX512_BF16 void pairs_row_block(const uint16_t* x, int64_t n, const uint16_t* panels, int64_t outputs,
                                        float* y) {
  __m512 acc[P][kChains];
  CANRUN_UNROLLED for (int p = 0; p < P; ++p) acc[p][0] = acc[p][1] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t x0 = input_pair(x, k), x1 = input_pair(x, k + 2);
    CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
      acc[p][0] = dot_pairs(acc[p][0], panel_pairs(panels + p * 16 * n, k, n), x0);
      acc[p][1] = dot_pairs(acc[p][1], panel_pairs(panels + p * 16 * n, k + 2, n), x1);
      prefetch_stream_ahead(panels + (p * n + k) * 16);  // one line of the step's two: as fast as both
    }
  }
  for (; k < n; k += 2) {
    const uint32_t xk = input_pair(x, k);
    const int chain = static_cast<int>(k % 4 / 2);
    CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
      const __m512i w = panel_pairs(panels + p * 16 * n, k, n);
      if (chain == 0) acc[p][0] = dot_pairs(acc[p][0], w, xk);
      else acc[p][1] = dot_pairs(acc[p][1], w, xk);
    }
  }
  CANRUN_UNROLLED for (int p = 0; p < P; ++p)
    store_outputs(_mm512_add_ps(acc[p][0], acc[p][1]), std::min<int64_t>(16, outputs - p * 16), y + p * 16);
}

CANRUN_AVX512_BF16 void panels_row_bf16_products(const uint16_t* x, int64_t n, const uint16_t* panels, int64_t count,
                                                 int64_t outputs, float* y) {
  int64_t q = 0;
  const auto run = [&]<int P>() {
    for (; q + P <= count; q += P) pairs_row_block<P>(x, n, panels + q * 16 * n, outputs - q * 16, y + q * 16);
  };
  run.template operator()<4>();
  run.template operator()<2>();
  run.template operator()<1>();
}

Primitives make_avx512() {
  Primitives set = avx2_primitives();
  set.panel_f32 = panel<Avx512Vector, float>;
  set.panel_bf16 = panel<Avx512Vector, uint16_t>;
  set.panels_row_f32 = panels_row<Avx512Vector, float>;
  set.panels_row_bf16 = panels_row<Avx512Vector, uint16_t>;
  set.panel_fp8 = panel_scaled<Avx512Vector, Fp8Bytes>;
  set.panels_row_fp8 = panels_row_scaled<Avx512Vector, Fp8Bytes>;
  set.panel_i8 = panel_scaled<Avx512Vector, Int8Bytes>;
  set.panels_row_i8 = panels_row_scaled<Avx512Vector, Int8Bytes>;
  set.panel_i4 = panel_scaled<Avx512Vector, Int4Bytes>;
  set.panels_row_i4 = panels_row_scaled<Avx512Vector, Int4Bytes>;
  set.rows_per_block = 8;  // 8 accumulators of 16 lanes (and 16 for bf16 products' two chains) of 32 registers
  return set;
}

Primitives make_avx512_bf16() {
  Primitives set = make_avx512();
  set.round_rows_bf16 = round_rows_bf16;
  set.panel_bf16_products = panel_bf16_products;
  set.panels_row_bf16_products = panels_row_bf16_products;
  return set;
}

}  // namespace

const Primitives& avx512_primitives() {
  static const Primitives set = make_avx512();
  return set;
}

const Primitives& avx512_bf16_primitives() {
  static const Primitives set = make_avx512_bf16();
  return set;
}

}  // namespace canrun::cpu
