#include "kernels/cpu/linear.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/onednn_product.h"
#include "kernels/cpu/primitives.h"
#include "util/aligned_buffer.h"

namespace canrun::cpu {
namespace {

// Below this many multiply-adds a product runs on one thread (ref's threshold too): a
// parallel region costs a barrier, which is slow whenever a core is busy with other work.
constexpr int64_t kParallelWork = 1 << 20;
// One row (decode) streams its weights from memory, and two threads draw more bandwidth than
// one from 32 Ki weights up (a 64x576 f32 product: 7.6 us on one thread, 5.9 us on two).
constexpr int64_t kParallelRowWork = 1 << 15;

// A pass that only reads and writes memory (rounding rows to bf16, adding a bias) is worth a
// parallel region from about 64 Ki values (a 128-row prompt of a 512-wide model).
constexpr int64_t kParallelMemoryPass = 1 << 16;

// Weight rows widened together for prefill: 16 rows of 4096 inputs are 256 KiB of f32, which
// stays in L2 while every row of x passes over them.
constexpr int64_t kTileRows = 16;

// FP8 and int8 rows are dequantised one at a time (WeightMatrix::copy_row), as the compiled
// panels multiply them: the same f32 weights.
void matvec(const Primitives& p, const float* x, const WeightMatrix& w, float* y) {
  const int64_t out = w.rows(), in = w.cols();
  const bool bf16 = w.dtype() == DType::kBF16, scaled = is_scaled_bytes(w.dtype());
#pragma omp parallel if (out * in > kParallelWork)
  {
    std::vector<float> row(scaled ? in : 0);
#pragma omp for schedule(static)
    for (int64_t o = 0; o < out; ++o) {
      if (scaled) w.copy_row(o, row.data());
      y[o] = bf16     ? p.dot_bf16(x, w.bf16_data() + o * in, in)
             : scaled ? p.dot_f32(x, row.data(), in)
                      : p.dot_f32(x, w.f32_data() + o * in, in);
    }
  }
}

void gemm(const Primitives& p, const float* x, int64_t rows, const WeightMatrix& w, float* y) {
  const int64_t out = w.rows(), in = w.cols();
  const bool bf16 = w.dtype() == DType::kBF16, scaled = is_scaled_bytes(w.dtype());
  const int64_t tiles = (out + kTileRows - 1) / kTileRows;
#pragma omp parallel if (rows * out * in > kParallelWork)
  {
    std::vector<float> widened(bf16 || scaled ? kTileRows * in : 0);
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t first = t * kTileRows, count = std::min(kTileRows, out - first);
      // Widened bf16/scaled-byte rows, else the f32 rows in place (an f32 offset into a null pointer
      // would be undefined).
      if (bf16) p.widen_bf16(w.bf16_data() + first * in, count * in, widened.data());
      else if (scaled)
        for (int64_t r = 0; r < count; ++r) w.copy_row(first + r, widened.data() + r * in);
      const float* tile = bf16 || scaled ? widened.data() : w.f32_data() + first * in;
      p.tile(x, rows, tile, count, in, y + first, out);
    }
  }
}

static_assert(WeightMatrix::kPanelWidth == 16, "the panel primitives read 16 weights per input");

// Packed panels: threads take panels (bf16 products two at a time: see
// panel_bf16_products); each stays in cache while a chunk of x's rows passes over it. One
// row (decode) streams every panel once.
constexpr int64_t kPanelsPerBf16Call = 2;

// y[r * ldy + o] += bias[o] for r < rows, o < width.
void add_bias(const float* bias, int64_t rows, int64_t width, float* y, int64_t ldy) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < width; ++o) y[r * ldy + o] += bias[o];
}

// The bias (null: none) is added to each group of panels' outputs while they are in cache.
void panel_product(const Primitives& p, const float* x, int64_t rows, const WeightMatrix& w, PanelChoice choice,
                   const float* bias, float* y) {
  const int64_t out = w.rows(), in = w.cols(), panels = w.panel_count();
  const int64_t panel_elements = WeightMatrix::kPanelWidth * in;
  const bool bf16 = w.dtype() == DType::kBF16, scaled = is_scaled_bytes(w.dtype());
  const auto panel_scaled = w.dtype() == DType::kI4 ? p.panel_i4 : w.dtype() == DType::kI8 ? p.panel_i8 : p.panel_fp8;
  const int64_t panel_bytes = scaled_bytes_for(w.dtype(), panel_elements);  // scaled bytes
  const int64_t chunk = choice.row_chunk > 0 ? choice.row_chunk : rows;
  const bool bf16_products = bf16 && p.panel_bf16_products != nullptr;
  const int64_t group = bf16_products ? kPanelsPerBf16Call : 1;
  const int64_t groups = (panels + group - 1) / group;
  const int rows_per_block = choice.rows_per_block > 0 ? choice.rows_per_block : p.rows_per_block;
  for (int64_t first_row = 0; first_row < rows; first_row += chunk) {
    const int64_t chunk_rows = std::min(chunk, rows - first_row);
    const float* xs = x + first_row * in;
    float* ys = y + first_row * out;
    const uint16_t* rounded = bf16_products ? rows_rounded_to_bf16(p, xs, chunk_rows, in) : nullptr;
#pragma omp parallel for schedule(static) if (chunk_rows * out * in > kParallelWork)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t q = g * group;
      const int64_t width = std::min(WeightMatrix::kPanelWidth, out - q * WeightMatrix::kPanelWidth);
      float* yq = ys + q * WeightMatrix::kPanelWidth;
      if (scaled)
        panel_scaled(xs, chunk_rows, in, static_cast<const uint8_t*>(w.panel_data()) + q * panel_bytes,
                     w.panel_scales() + q * w.scale_blocks() * WeightMatrix::kPanelWidth, w.block_cols(), width, yq,
                     out, rows_per_block);
      else if (bf16_products)
        p.panel_bf16_products(rounded, chunk_rows, in,
                              static_cast<const uint16_t*>(w.panel_data()) + q * panel_elements,
                              std::min(group, panels - q), out - q * WeightMatrix::kPanelWidth, yq, out,
                              rows_per_block);
      else if (bf16)
        p.panel_bf16(xs, chunk_rows, in, static_cast<const uint16_t*>(w.panel_data()) + q * panel_elements, width,
                     yq, out, rows_per_block);
      else
        p.panel_f32(xs, chunk_rows, in, static_cast<const float*>(w.panel_data()) + q * panel_elements, width, yq,
                    out, rows_per_block);
      if (bias != nullptr)
        add_bias(bias + q * WeightMatrix::kPanelWidth, chunk_rows,
                 std::min(group * WeightMatrix::kPanelWidth, out - q * WeightMatrix::kPanelWidth), yq, out);
    }
  }
}

// Decode (one row of x): each thread streams one contiguous run of panels, the runs as even
// as whole panels allow (a product is memory-bound, and the slowest thread sets its time).
void panels_row_product(const Primitives& p, const float* x, const WeightMatrix& w, float* y) {
  const int64_t out = w.rows(), in = w.cols(), panels = w.panel_count();
  const int64_t panel_elements = WeightMatrix::kPanelWidth * in;
  const bool bf16 = w.dtype() == DType::kBF16, scaled = is_scaled_bytes(w.dtype());
  const auto panels_row_scaled =
      w.dtype() == DType::kI4 ? p.panels_row_i4 : w.dtype() == DType::kI8 ? p.panels_row_i8 : p.panels_row_fp8;
  const int64_t panel_bytes = scaled_bytes_for(w.dtype(), panel_elements);  // scaled bytes
  const bool bf16_products = bf16 && p.panels_row_bf16_products != nullptr;
  const uint16_t* rounded = bf16_products ? rows_rounded_to_bf16(p, x, 1, in) : nullptr;
#pragma omp parallel if (out * in >= kParallelRowWork)
  {
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const int64_t first = panels * thread / threads, count = panels * (thread + 1) / threads - first;
    const int64_t offset = first * WeightMatrix::kPanelWidth;
    if (count > 0 && scaled)
      panels_row_scaled(x, in, static_cast<const uint8_t*>(w.panel_data()) + first * panel_bytes,
                        w.panel_scales() + first * w.scale_blocks() * WeightMatrix::kPanelWidth, w.block_cols(), count,
                        out - offset, y + offset);
    else if (count > 0 && bf16_products)
      p.panels_row_bf16_products(rounded, in,
                                 static_cast<const uint16_t*>(w.panel_data()) + first * panel_elements, count,
                                 out - offset, y + offset);
    else if (count > 0 && bf16)
      p.panels_row_bf16(x, in, static_cast<const uint16_t*>(w.panel_data()) + first * panel_elements, count,
                        out - offset, y + offset);
    else if (count > 0)
      p.panels_row_f32(x, in, static_cast<const float*>(w.panel_data()) + first * panel_elements, count,
                       out - offset, y + offset);
  }
}

// y[r, o] += bias[o] over all rows of a product, on every thread where there are enough.
void add_bias_rows(const float* bias, int64_t rows, int64_t out, float* y) {
#pragma omp parallel for schedule(static) if (rows * out > kParallelMemoryPass)
  for (int64_t r = 0; r < rows; ++r) add_bias(bias, 1, out, y + r * out, out);
}

}  // namespace

const uint16_t* rows_rounded_to_bf16(const Primitives& p, const float* x, int64_t rows, int64_t n) {
  // Kept per calling thread: a fresh buffer per product would page-fault a prompt's rows each time.
  thread_local AlignedBuffer buffer;
  auto* rounded = reinterpret_cast<uint16_t*>(
      buffer.reserve(rows * rounded_row_stride(n) * static_cast<int64_t>(sizeof(uint16_t)), "bf16 activations"));
  // A prompt's rows on every thread: on one, the others would wait for it before the product.
  const int64_t stride = rounded_row_stride(n);
#pragma omp parallel for schedule(static) if (rows * n > kParallelMemoryPass)
  for (int64_t r = 0; r < rows; ++r) p.round_rows_bf16(x + r * n, 1, n, rounded + r * stride);
  return rounded;
}

void linear(const float* x, int64_t rows, const WeightMatrix& w, const float* bias, const KernelChoices& choices,
            float* y) {
  linear_with(primitives(), x, rows, w, bias, choices, y);
}

void linear_with(const Primitives& p, const float* x, int64_t rows, const WeightMatrix& w, const float* bias,
                 const KernelChoices& choices, float* y) {
  if (w.layout() == MatrixLayout::kPanels && rows > 1) {
    const PanelChoice choice = choices.panels.find(rows, w.rows(), w.cols(), w.dtype());
    if (choice.kernel != ProductKernel::kOnednn) return panel_product(p, x, rows, w, choice, bias, y);
    onednn_product(p, x, rows, w, y);
  } else if (w.layout() == MatrixLayout::kPanels) {
    panels_row_product(p, x, w, y);
  } else if (rows == 1) {
    matvec(p, x, w, y);
  } else {
    gemm(p, x, rows, w, y);
  }
  if (bias != nullptr) add_bias_rows(bias, rows, w.rows(), y);
}

}  // namespace canrun::cpu
