#include "runtime/backend.h"

#include <string>

#include "kernels/cpu/linear.h"
#include "kernels/ref/ops.h"
#include "util/error.h"

namespace canrun {

std::string_view backend_name(Backend backend) { return backend == Backend::kRef ? "ref" : "cpu"; }

Backend parse_backend(std::string_view name, std::string_view option) {
  if (name == "ref") return Backend::kRef;
  if (name == "cpu") return Backend::kCpu;
  fail(ErrorKind::kUsage, std::string(option) + ": unknown backend '" + std::string(name) + "' (ref, cpu)");
}

void linear(Backend backend, const float* x, int64_t rows, const WeightMatrix& w, const float* bias, float* y) {
  if (backend == Backend::kCpu) return cpu::linear(x, rows, w, bias, y);
  if (w.dtype() != DType::kF32)
    fail(ErrorKind::kRuntime, "ref backend: a " + std::string(dtype_name(w.dtype())) +
                                  " weight matrix reached ref::linear, which computes on f32 only");
  ref::linear(x, rows, w.cols(), w.f32_data(), bias, w.rows(), y);
}

}  // namespace canrun
