// Kernel choices tuned for a compiled shape: each candidate way of running a product with a
// packed matrix (cpu::PanelChoice) is timed on the real weights with random input of the
// bucket's row count, and the fastest is kept. The panel candidates give identical results;
// oneDNN's matmul, a candidate for large products where it runs (onednn_product.h), is within
// f32 rounding of them. One row (decode) has a single way and is not tuned.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/panel_choices.h"
#include "tensor/weight_matrix.h"
#include "util/json.h"

namespace canrun {

struct TunedProduct {
  cpu::PanelShape shape;
  cpu::PanelChoice choice;
  std::vector<std::pair<cpu::PanelChoice, double>> seconds;  // best time of each candidate
};

// `w` is packed (panels); rows > 1.
TunedProduct tune_panel_product(const WeightMatrix& w, int64_t rows);

Json tuned_json(const TunedProduct& tuned);
// Reads what tuned_json wrote; throws Error(kIo) naming `where` when malformed.
TunedProduct tuned_from_json(const Json& json, const std::string& where);

}  // namespace canrun
