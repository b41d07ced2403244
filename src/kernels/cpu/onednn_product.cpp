#include "kernels/cpu/onednn_product.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/cpu/linear.h"
#include "util/aligned_buffer.h"
#include "util/error.h"

namespace canrun::cpu {
namespace {

using dnnl::memory;

// The most oneDNN may use under the chosen set: its bf16 instructions only matter for bf16
// weights, which reach oneDNN only with loops that have bf16 products.
dnnl::cpu_isa isa_limit() {
  if (chosen_instruction_set() == InstructionSet::kAvx2Fma) return dnnl::cpu_isa::avx2;
  return processor_supports(InstructionSet::kAvx512Bf16) ? dnnl::cpu_isa::avx512_core_bf16
                                                         : dnnl::cpu_isa::avx512_core;
}

const dnnl::engine& engine() {
  static const dnnl::engine cpu = [] {
    // Before the first primitive, the only time oneDNN takes a limit.
    dnnl::set_max_cpu_isa(isa_limit());
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return cpu;
}

memory::data_type type_of(const WeightMatrix& w) {
  return w.dtype() == DType::kBF16 ? memory::data_type::bf16 : memory::data_type::f32;
}

// The packed panels (weight_matrix.h) as oneDNN memory: [in, out], the outputs blocked by
// kPanelWidth, the last block padded with zero rows.
memory::desc panels_desc(const WeightMatrix& w) {
  memory::desc desc({w.cols(), w.rows()}, type_of(w), memory::format_tag::ab);
  dnnl_memory_desc_t& d = desc.data;
  d.padded_dims[1] = w.panel_count() * WeightMatrix::kPanelWidth;
  dnnl_blocking_desc_t& blocking = d.format_desc.blocking;
  blocking.strides[0] = WeightMatrix::kPanelWidth;
  blocking.strides[1] = WeightMatrix::kPanelWidth * w.cols();
  blocking.inner_nblks = 1;
  blocking.inner_blks[0] = WeightMatrix::kPanelWidth;
  blocking.inner_idxs[0] = 1;
  return desc;
}

// bf16 rows of x are round_rows_bf16's, rounded_row_stride(in) values apart.
memory::desc source_desc(int64_t rows, const WeightMatrix& w) {
  if (w.dtype() == DType::kBF16) return {{rows, w.cols()}, memory::data_type::bf16, {rounded_row_stride(w.cols()), 1}};
  return {{rows, w.cols()}, memory::data_type::f32, memory::format_tag::ab};
}

dnnl::matmul::primitive_desc matmul_desc(int64_t rows, const WeightMatrix& w) {
  const memory::desc weights({w.cols(), w.rows()}, type_of(w), memory::format_tag::any);
  const memory::desc output({rows, w.rows()}, memory::data_type::f32, memory::format_tag::ab);
  return {dnnl::matmul::desc(source_desc(rows, w), weights, output), engine()};
}

std::string shape_text(int64_t rows, const WeightMatrix& w) {
  return std::to_string(rows) + "x" + std::to_string(w.cols()) + " by " + std::to_string(w.cols()) + "x" +
         std::to_string(w.rows()) + (w.dtype() == DType::kBF16 ? " bf16" : " f32");
}

}  // namespace

bool onednn_runs(const Primitives& loops, int64_t rows, const WeightMatrix& w) {
  if (chosen_instruction_set() == InstructionSet::kPortable || w.layout() != MatrixLayout::kPanels || rows < 1)
    return false;
  if (w.dtype() == DType::kBF16 && loops.round_rows_bf16 == nullptr) return false;
  if (is_scaled_bytes(w.dtype())) return false;  // its matmul would need the panels widened first
  try {
    return std::string(matmul_desc(rows, w).impl_info_str()).rfind("ref", 0) != 0;
  } catch (const dnnl::error&) {
    return false;
  }
}

void onednn_product(const Primitives& loops, const float* x, int64_t rows, const WeightMatrix& w, float* y) {
  // Per calling thread, kept between calls: a fresh allocation would page-fault it every time.
  thread_local AlignedBuffer weights_scratch;
  try {
    const dnnl::matmul::primitive_desc product = matmul_desc(rows, w);
    thread_local dnnl::stream stream(engine());
    memory panels(panels_desc(w), engine(), const_cast<void*>(w.panel_data()));
    memory weights(product.weights_desc(), engine(),
                   weights_scratch.reserve(static_cast<int64_t>(product.weights_desc().get_size()), "oneDNN weights"));
    dnnl::reorder(panels, weights).execute(stream, panels, weights);
    const void* source = w.dtype() == DType::kBF16 ? rows_rounded_to_bf16(loops, x, rows, w.cols())
                                                   : static_cast<const void*>(x);
    memory input(product.src_desc(), engine(), const_cast<void*>(source));
    memory output(product.dst_desc(), engine(), y);
    dnnl::matmul(product).execute(stream,
                                  {{DNNL_ARG_SRC, input}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, output}});
    stream.wait();
  } catch (const dnnl::error& e) {
    fail(ErrorKind::kRuntime, "oneDNN matmul " + shape_text(rows, w) + ": " + e.what());
  }
}

std::string onednn_version() {
  const dnnl_version_t* version = dnnl_version();
  return std::to_string(version->major) + "." + std::to_string(version->minor) + "." + std::to_string(version->patch);
}

}  // namespace canrun::cpu
