// The inner loops of the cpu backend, one set per instruction set (instruction_set.h): a
// portable one, and AVX2+FMA, AVX-512 and AVX-512+BF16 ones compiled with function-level
// target attributes; primitives() is the chosen set's.
#pragma once

#include <cstdint>

#include "kernels/cpu/instruction_set.h"
#include "kernels/ref/ops.h"
#include "tensor/dtype.h"

namespace canrun::cpu {

struct Primitives {
  // dst[i] = the f32 value of bf16 src[i], for n values.
  void (*widen_bf16)(const uint16_t* src, int64_t n, float* dst);
  // The dot product of n values, accumulated in f32.
  float (*dot_f32)(const float* x, const float* w, int64_t n);
  float (*dot_bf16)(const float* x, const uint16_t* w, int64_t n);
  // out[h * count + i] = dot(x + h * n, row i) for h < heads, i < count, the rows `n` values
  // apart and stored as `dtype` (attention's scores of a kv head's query heads over its cached
  // keys; a bf16/f16 cache is widened exactly as loaded). Each score's bits are the same for
  // any `heads`: heads only share the loads of the keys.
  void (*dot_rows)(const float* x, int64_t heads, const void* rows, DType dtype, int64_t count, int64_t n,
                   float* out);
  // A softmax's loops (ref::SoftmaxLoops's contracts).
  ref::SoftmaxLoops softmax_loops;
  // y[i] = silu(gate[i]) * up[i] = gate[i] / (1 + exp(-gate[i])) * up[i] (the SwiGLU MLP),
  // exp within 4 ulp.
  void (*gated_silu)(const float* gate, const float* up, int64_t n, float* y);
  // y[i] = 0.5 x[i] (1 + erf(x[i] / sqrt(2))), the exact GELU (BERT's MLP), erf within 4 ulp.
  void (*gelu)(const float* x, int64_t n, float* y);
  // out[h * n + j] = sum over p < count of weights[h * count + p] * rows[p * n + j], for
  // h < heads, j < n (attention's probabilities of a kv head's query heads times its cached
  // values, stored as `dtype`), summed over p in order: the same bits for any `heads`.
  void (*weighted_sum)(const float* weights, int64_t heads, const void* rows, DType dtype, int64_t count, int64_t n,
                       float* out);
  // y[r * ldy + o] = dot(x[r], w[o]) for r < x_rows, o < w_rows; x is [x_rows, n], w [w_rows, n].
  // Each output is summed in the same order whatever x_rows and w_rows are.
  void (*tile)(const float* x, int64_t x_rows, const float* w, int64_t w_rows, int64_t n, float* y, int64_t ldy);
  // One panel of a packed matrix (WeightMatrix::kPanelWidth rows stored column by column, f32
  // or bf16 per the function): y[r * ldy + j] = dot(x[r], panel row j) for r < x_rows and
  // j < width. `rows_per_block` rows of x (1, 2, 4, 6 or 8) share each load of weights. Every
  // output is summed over k in order, so neither rows_per_block nor x_rows changes a result.
  void (*panel_f32)(const float* x, int64_t x_rows, int64_t n, const float* panel, int64_t width, float* y,
                    int64_t ldy, int rows_per_block);
  void (*panel_bf16)(const float* x, int64_t x_rows, int64_t n, const uint16_t* panel, int64_t width, float* y,
                     int64_t ldy, int rows_per_block);
  // One row of x (decode) against `count` consecutive panels: y[i] = dot(x, packed row i) for
  // i < outputs (at most 16 * count). The same bits as panel_f32 / panel_bf16 with one row.
  void (*panels_row_f32)(const float* x, int64_t n, const float* panels, int64_t count, int64_t outputs, float* y);
  void (*panels_row_bf16)(const float* x, int64_t n, const uint16_t* panels, int64_t count, int64_t outputs,
                          float* y);
  // The same over FP8, int8 and int4 panels (WeightMatrix's layout comment): each weight its
  // E4M3, int8 or int4 value times its scale, `scales` holding, per block of `block_cols` inputs, the panel's
  // 16 scales (the next panel's follow). Each weight rounds to f32 once, as dequantising the
  // matrix does, so the bits are panel_f32's over the dequantised matrix.
  void (*panel_fp8)(const float* x, int64_t x_rows, int64_t n, const uint8_t* panel, const float* scales,
                    int64_t block_cols, int64_t width, float* y, int64_t ldy, int rows_per_block);
  void (*panels_row_fp8)(const float* x, int64_t n, const uint8_t* panels, const float* scales, int64_t block_cols,
                         int64_t count, int64_t outputs, float* y);
  void (*panel_i8)(const float* x, int64_t x_rows, int64_t n, const uint8_t* panel, const float* scales,
                   int64_t block_cols, int64_t width, float* y, int64_t ldy, int rows_per_block);
  void (*panels_row_i8)(const float* x, int64_t n, const uint8_t* panels, const float* scales, int64_t block_cols,
                        int64_t count, int64_t outputs, float* y);
  void (*panel_i4)(const float* x, int64_t x_rows, int64_t n, const uint8_t* panel, const float* scales,
                   int64_t block_cols, int64_t width, float* y, int64_t ldy, int rows_per_block);
  void (*panels_row_i4)(const float* x, int64_t n, const uint8_t* panels, const float* scales, int64_t block_cols,
                        int64_t count, int64_t outputs, float* y);
  // bf16 products, where the set has them (x86_64-avx512-bf16; null elsewhere), run for bf16
  // panels in place of panel_bf16 / panels_row_bf16: the rows of x rounded to bf16 once per
  // product (round_rows_bf16, each row zero-padded to rounded_row_stride(n) values), then
  // multiplied two inputs at a time. The same bits for every block shape and row count.
  // panel_bf16_products takes `count` consecutive panels: y[r * ldy + i] = dot(x[r], packed
  // row i) for i < outputs (at most 16 * count).
  void (*round_rows_bf16)(const float* x, int64_t rows, int64_t n, uint16_t* out) = nullptr;
  void (*panel_bf16_products)(const uint16_t* x, int64_t x_rows, int64_t n, const uint16_t* panels, int64_t count,
                              int64_t outputs, float* y, int64_t ldy, int rows_per_block) = nullptr;
  void (*panels_row_bf16_products)(const uint16_t* x, int64_t n, const uint16_t* panels, int64_t count,
                                   int64_t outputs, float* y) = nullptr;
  // The rows_per_block of a product no plan tuned (a batch of decode steps, the logits of
  // several sequences): the most whose accumulators fit the set's vector registers.
  int rows_per_block = 4;
};

inline int64_t rounded_row_stride(int64_t n) { return (n + 15) / 16 * 16; }

const Primitives& portable_primitives();
const Primitives& avx2_primitives();
const Primitives& avx512_primitives();
const Primitives& avx512_bf16_primitives();
// The set's loops; call only for a set processor_supports().
const Primitives& primitives_for(InstructionSet set);
// The loops of chosen_instruction_set().
const Primitives& primitives();

}  // namespace canrun::cpu
