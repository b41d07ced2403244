// The inner loops of the cpu backend, one set per instruction set: a portable one and an
// AVX2+FMA one compiled with function-level target attributes. linear.cpp picks a set once.
#pragma once

#include <cstdint>

namespace canrun::cpu {

struct Primitives {
  // dst[i] = the f32 value of bf16 src[i], for n values.
  void (*widen_bf16)(const uint16_t* src, int64_t n, float* dst);
  // The dot product of n values, accumulated in f32.
  float (*dot_f32)(const float* x, const float* w, int64_t n);
  float (*dot_bf16)(const float* x, const uint16_t* w, int64_t n);
  // y[r * ldy + o] = dot(x[r], w[o]) for r < x_rows, o < w_rows; x is [x_rows, n], w [w_rows, n].
  // Each output is summed in the same order whatever x_rows and w_rows are.
  void (*tile)(const float* x, int64_t x_rows, const float* w, int64_t w_rows, int64_t n, float* y, int64_t ldy);
};

const Primitives& portable_primitives();
const Primitives& avx2_primitives();

}  // namespace canrun::cpu
