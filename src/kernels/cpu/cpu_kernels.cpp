// The cpu backend's table: ref's, with the ops it has fast versions of (matrix products on
// f32/bf16 rows or packed panels, attention, the activations, norms over many rows) in
// their place.
#include "kernels/cpu/attention.h"
#include "kernels/cpu/gated_activation.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/norm.h"
#include "kernels/ref/ops.h"

namespace canrun {
namespace {

void attention(const AttentionArgs& args) {
  if (cpu::attends_in_tiles(args))
    cpu::attention_in_tiles(args);
  else
    ref::attention_with(args, cpu::attend);
}

KernelTable make_table() {
  KernelTable table = ref_kernels();
  table.backend = Backend::kCpu;
  table.linear = cpu::linear;
  table.attention = attention;
  table.activation = cpu::activation;
  table.gated_activation = cpu::gated_activation;
  table.rms_norm = cpu::rms_norm;
  table.layer_norm = cpu::layer_norm;
  return table;
}

}  // namespace

const KernelTable& cpu_kernels() {
  static const KernelTable table = make_table();
  return table;
}

}  // namespace canrun
