// The ref backend's table: every op, plain f32 with double accumulation where it sums.
#include <string>

#include "kernels/ref/ops.h"
#include "util/error.h"

namespace canrun {
namespace {

void embed(const WeightMatrix& table, const int32_t* ids, int64_t count, float* out) {
  for (int64_t t = 0; t < count; ++t) table.copy_row(ids[t], out + t * table.cols());
}

void linear(const float* x, int64_t rows, const WeightMatrix& w, const float* bias, const KernelChoices&, float* y) {
  if (w.layout() != MatrixLayout::kRows)
    fail(ErrorKind::kRuntime, "ref backend: packed panels reached ref::linear, which computes on row-major matrices");
  if (w.dtype() == DType::kF32)
    ref::linear(x, rows, w.cols(), w.f32_data(), bias, w.rows(), y);
  else
    ref::linear(x, rows, w, bias, y);
}

}  // namespace

const KernelTable& ref_kernels() {
  static const KernelTable table{
      .backend = Backend::kRef,
      .embed = embed,
      .linear = linear,
      .rms_norm = ref::rms_norm,
      .layer_norm = ref::layer_norm,
      .rotary_halves = ref::apply_rotary,
      .rotary_pairs = ref::apply_rotary_interleaved,
      .activation = ref::activation,
      .gated_activation = ref::gated_activation,
      .clamped_swiglu = ref::clamped_swiglu,
      .attention = ref::attention,
      .softmax = ref::softmax,
      .softcap = ref::softcap,
      .scale = ref::scale,
      .add_scaled = ref::add_scaled,
  };
  return table;
}

const KernelTable& kernels_for(Backend backend) {
  return backend == Backend::kCpu ? cpu_kernels() : ref_kernels();
}

}  // namespace canrun
