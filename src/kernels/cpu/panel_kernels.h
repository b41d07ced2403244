// The packed-panel products (primitives.h: panel_*, panels_row_*) written once for any vector
// width. A primitives_<set>.cpp defines CANRUN_TARGET (its target attribute) and a vector type
// V, then includes this file, whose templates are in an anonymous namespace: each set compiles
// its own copy with its own instructions. V provides:
//   using F;  static constexpr int kLanes;  (16 % kLanes == 0)
//   static constexpr bool kPrefetchStreams;  (whether decode prefetches its weight streams)
//   F zero();  F load(const float*);  F load(const uint16_t*) (bf16 widened);  F broadcast(const float*);
//   F splat(float);  F mul(F, F);  F fma(F a, F b, F acc);  void store(float*, F) (any alignment);
//   F load_fp8(const uint8_t*) (E4M3 values times 2^-8, exactly: their bits read as f16)
//   F load_i8(const int8_t*) (int8 values, exactly)
//   F load_i4(const uint8_t* column, int v) (an int4 panel column's rows v * kLanes onwards:
//   rows 0-7 are the low nibbles of its 8 bytes, rows 8-15 the high ones, each value + 8; exactly)
// Every output is one FMA chain over
// k in order, so the bits are the same for every width, block shape and row count.
#pragma once

#include <algorithm>
#include <cstdint>

#ifndef CANRUN_TARGET
#error "define CANRUN_TARGET (the including set's target attribute) before including panel_kernels.h"
#endif

// Loops over accumulators must be unrolled, or the accumulators live in memory, not registers.
#define CANRUN_UNROLLED _Pragma("GCC unroll 16")

namespace canrun::cpu {
namespace {

template <typename V>
inline constexpr int kVectorsPerPanel = 16 / V::kLanes;

// One row (decode) reads each weight once, straight from memory. With 16-lane loads the
// hardware prefetcher alone left two Zen 4 threads short of the bandwidth; asking L2 for the
// line this far ahead of each stream read a 1 GiB matrix at 51 GB/s instead of 45 (bf16) and
// 54 instead of 49 (f32), against a 53 GB/s triad, with distances of 1-4 KiB within 2% of each
// other. AVX2's 8-lane loops measured no faster with it, and go without.
constexpr int64_t kStreamPrefetchBytes = 2048;

// Asks L2 for the line kStreamPrefetchBytes past `position` of a weight stream.
inline void prefetch_stream_ahead(const void* position) {
  __builtin_prefetch(static_cast<const char*>(position) + kStreamPrefetchBytes, 0, 2);
}

// Where a panel's weights come from, one block of inputs after another. Each source gives
// column(k), the panel's 16 weights at input k, valid after enter_block(the block of k),
// prefetch_next(k, n), which asks the cache for the next panel's column k, and
// prefetch_ahead(k), which asks for the weights kStreamPrefetchBytes past column k's (once per
// 64-byte line: a column of f32 weights is a line, of bf16 half, of FP8 a quarter).

// Weights stored as computed (f32, or bf16 widened exactly): all n inputs are one block.
template <typename V, typename W>
struct StoredPanel {
  using F = typename V::F;
  const W* weights;
  int64_t block_cols(int64_t n) const { return n; }
  StoredPanel following(int64_t index, int64_t n) const { return {weights + index * 16 * n}; }
  void prefetch_next(int64_t k, int64_t n) const { __builtin_prefetch(weights + (n + k) * 16, 0, 2); }
  void prefetch_ahead(int64_t k) const {
    if (V::kPrefetchStreams && k % (4 / sizeof(W)) == 0) prefetch_stream_ahead(weights + k * 16);
  }
  CANRUN_TARGET void enter_block(int64_t) {}
  CANRUN_TARGET void column(int64_t k, F (&w)[kVectorsPerPanel<V>]) const {
    CANRUN_UNROLLED for (int v = 0; v < kVectorsPerPanel<V>; ++v) w[v] = V::load(weights + k * 16 + v * V::kLanes);
  }
};

// How a scaled-byte panel's bytes become floats: load(column, v) gives the kLanes values of
// rows v * kLanes onwards of a column of kColumnBytes bytes, each the stored value times
// kScaleFactor^-1, exactly.
template <typename V>
struct Fp8Bytes {
  static constexpr float kScaleFactor = 256.0f;  // the 2^8 that load_fp8 leaves out
  static constexpr int64_t kColumnBytes = 16;
  CANRUN_TARGET static typename V::F load(const uint8_t* column, int v) { return V::load_fp8(column + v * V::kLanes); }
};
template <typename V>
struct Int8Bytes {
  static constexpr float kScaleFactor = 1.0f;
  static constexpr int64_t kColumnBytes = 16;
  CANRUN_TARGET static typename V::F load(const uint8_t* column, int v) {
    return V::load_i8(reinterpret_cast<const int8_t*>(column) + v * V::kLanes);
  }
};
template <typename V>
struct Int4Bytes {
  static constexpr float kScaleFactor = 1.0f;
  static constexpr int64_t kColumnBytes = 8;
  CANRUN_TARGET static typename V::F load(const uint8_t* column, int v) { return V::load_i4(column, v); }
};

// FP8, int8 or int4 values times their rows' scales for the block, each product rounded once.
// What the load leaves out goes into the scale, exactly, so the product is the same.
template <typename V, typename Bytes>
struct ScaledBytePanel {
  using F = typename V::F;
  const uint8_t* weights;
  const float* scales;  // 16 per block, this panel's
  int64_t block;
  F scale[kVectorsPerPanel<V>];
  int64_t block_cols(int64_t) const { return block; }
  static constexpr int64_t kColumnBytes = Bytes::kColumnBytes;
  ScaledBytePanel following(int64_t index, int64_t n) const {
    const int64_t blocks = (n + block - 1) / block;
    return {weights + index * kColumnBytes * n, scales + index * blocks * 16, block, {}};
  }
  void prefetch_next(int64_t k, int64_t n) const { __builtin_prefetch(weights + (n + k) * kColumnBytes, 0, 2); }
  void prefetch_ahead(int64_t k) const {
    if (V::kPrefetchStreams && k % (64 / kColumnBytes) == 0) prefetch_stream_ahead(weights + k * kColumnBytes);
  }
  CANRUN_TARGET void enter_block(int64_t b) {
    CANRUN_UNROLLED for (int v = 0; v < kVectorsPerPanel<V>; ++v)
      scale[v] = V::mul(V::load(scales + b * 16 + v * V::kLanes), V::splat(Bytes::kScaleFactor));
  }
  CANRUN_TARGET void column(int64_t k, F (&w)[kVectorsPerPanel<V>]) const {
    CANRUN_UNROLLED for (int v = 0; v < kVectorsPerPanel<V>; ++v)
      w[v] = V::mul(Bytes::load(weights + k * kColumnBytes, v), scale[v]);
  }
};

// A panel's 16 outputs from its accumulators; the first `width` are kept. A whole panel goes
// straight to y: the copy loop of a partial one becomes a call to memmove (0.6% of a prefill).
template <typename V>
CANRUN_TARGET inline void store_panel_outputs(const typename V::F (&acc)[kVectorsPerPanel<V>], int64_t width,
                                              float* y) {
  if (width == 16) {
    CANRUN_UNROLLED for (int v = 0; v < kVectorsPerPanel<V>; ++v) V::store(y + v * V::kLanes, acc[v]);
    return;
  }
  alignas(64) float out[16];
  CANRUN_UNROLLED for (int v = 0; v < kVectorsPerPanel<V>; ++v) V::store(out + v * V::kLanes, acc[v]);
  for (int64_t j = 0; j < width; ++j) y[j] = out[j];
}

// R rows of x against one panel: each weight load feeds R FMAs. With several rows the loop
// is busy computing rather than waiting on memory, so the first block also brings in the next
// panel (`prefetch`) while it works.
template <typename V, int R, typename Panel>
CANRUN_TARGET void panel_block(const float* x, int64_t n, Panel panel, int64_t width, float* y, int64_t ldy,
                               bool prefetch) {
  using F = typename V::F;
  constexpr int kV = kVectorsPerPanel<V>;
  F acc[R][kV];
  CANRUN_UNROLLED for (int r = 0; r < R; ++r)
    CANRUN_UNROLLED for (int v = 0; v < kV; ++v) acc[r][v] = V::zero();
  const int64_t block_cols = panel.block_cols(n);
  for (int64_t start = 0; start < n; start += block_cols) {
    panel.enter_block(start / block_cols);
    for (int64_t k = start, end = std::min(n, start + block_cols); k < end; ++k) {
      F w[kV];
      panel.column(k, w);
      if (prefetch) panel.prefetch_next(k, n);
      CANRUN_UNROLLED for (int r = 0; r < R; ++r) {
        const F xv = V::broadcast(x + r * n + k);
        CANRUN_UNROLLED for (int v = 0; v < kV; ++v) acc[r][v] = V::fma(xv, w[v], acc[r][v]);
      }
    }
  }
  // Unrolled: an accumulator indexed at run time anywhere would keep the whole array in
  // memory, stored on every step of k.
  CANRUN_UNROLLED for (int r = 0; r < R; ++r) store_panel_outputs<V>(acc[r], width, y + r * ldy);
}

template <typename V, typename Panel>
CANRUN_TARGET void panel_rows(const float* x, int64_t x_rows, int64_t n, Panel panel, int64_t width, float* y,
                              int64_t ldy, int rows_per_block) {
  int64_t r = 0;
  const auto run = [&]<int R>() {
    for (; r + R <= x_rows; r += R) panel_block<V, R>(x + r * n, n, panel, width, y + r * ldy, ldy, r == 0);
  };
  if (rows_per_block >= 8) run.template operator()<8>();
  if (rows_per_block >= 6) run.template operator()<6>();
  if (rows_per_block >= 4) run.template operator()<4>();
  if (rows_per_block >= 2) run.template operator()<2>();
  run.template operator()<1>();
}

// One row of x against P consecutive panels: P weight streams and P * kV accumulator chains
// in flight, where one panel alone would wait on the latency of its own chains; with
// V::kPrefetchStreams, each stream prefetched ahead (kStreamPrefetchBytes).
template <typename V, int P, typename Panel>
CANRUN_TARGET void panels_row_block(const float* x, int64_t n, Panel first, int64_t outputs, float* y) {
  using F = typename V::F;
  constexpr int kV = kVectorsPerPanel<V>;
  F acc[P][kV];
  Panel panels[P];
  CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
    panels[p] = first.following(p, n);
    CANRUN_UNROLLED for (int v = 0; v < kV; ++v) acc[p][v] = V::zero();
  }
  const int64_t block_cols = first.block_cols(n);
  for (int64_t start = 0; start < n; start += block_cols) {
    CANRUN_UNROLLED for (int p = 0; p < P; ++p) panels[p].enter_block(start / block_cols);
    for (int64_t k = start, end = std::min(n, start + block_cols); k < end; ++k) {
      const F xv = V::broadcast(x + k);
      CANRUN_UNROLLED for (int p = 0; p < P; ++p) {
        F w[kV];
        panels[p].column(k, w);
        panels[p].prefetch_ahead(k);
        CANRUN_UNROLLED for (int v = 0; v < kV; ++v) acc[p][v] = V::fma(xv, w[v], acc[p][v]);
      }
    }
  }
  CANRUN_UNROLLED for (int p = 0; p < P; ++p)  // unrolled, or acc would live in memory (see panel_block)
    store_panel_outputs<V>(acc[p], std::min<int64_t>(16, outputs - p * 16), y + p * 16);
}

// Four panels at a time, then two, then one: eight measured no faster at 16 lanes, and would
// spill AVX2's 16 registers.
template <typename V, typename Panel>
CANRUN_TARGET void panels_row_of(const float* x, int64_t n, Panel first, int64_t count, int64_t outputs, float* y) {
  int64_t q = 0;
  const auto run = [&]<int P>() {
    for (; q + P <= count; q += P) panels_row_block<V, P>(x, n, first.following(q, n), outputs - q * 16, y + q * 16);
  };
  run.template operator()<4>();
  run.template operator()<2>();
  run.template operator()<1>();
}

// The entry points of primitives.h.
template <typename V, typename W>
CANRUN_TARGET void panel(const float* x, int64_t x_rows, int64_t n, const W* w, int64_t width, float* y, int64_t ldy,
                         int rows_per_block) {
  panel_rows<V>(x, x_rows, n, StoredPanel<V, W>{w}, width, y, ldy, rows_per_block);
}

template <typename V, typename W>
CANRUN_TARGET void panels_row(const float* x, int64_t n, const W* panels, int64_t count, int64_t outputs, float* y) {
  panels_row_of<V>(x, n, StoredPanel<V, W>{panels}, count, outputs, y);
}

template <typename V, template <typename> class Bytes>
CANRUN_TARGET void panel_scaled(const float* x, int64_t x_rows, int64_t n, const uint8_t* w, const float* scales,
                                int64_t block_cols, int64_t width, float* y, int64_t ldy, int rows_per_block) {
  panel_rows<V>(x, x_rows, n, ScaledBytePanel<V, Bytes<V>>{w, scales, block_cols, {}}, width, y, ldy, rows_per_block);
}

template <typename V, template <typename> class Bytes>
CANRUN_TARGET void panels_row_scaled(const float* x, int64_t n, const uint8_t* panels, const float* scales,
                                     int64_t block_cols, int64_t count, int64_t outputs, float* y) {
  panels_row_of<V>(x, n, ScaledBytePanel<V, Bytes<V>>{panels, scales, block_cols, {}}, count, outputs, y);
}

}  // namespace
}  // namespace canrun::cpu
