// How the cpu backend runs a product with a packed (panels) matrix, and the choices a compiled
// plan carries: per matrix shape and prompt bucket, the way the compile step found fastest. A
// product whose shape was never tuned uses the default choice. Every panel choice gives the
// same result, only the speed differs; oneDNN's matmul sums in another order, so its results
// are within f32 rounding of the panels' (onednn_product.h).
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace canrun::cpu {

// The rows_per_block values the panel primitives take, smallest first.
inline constexpr int kPanelRowBlocks[] = {1, 2, 4, 6, 8};

// Whose loops run the product.
enum class ProductKernel { kPanels, kOnednn };

struct PanelChoice {
  // kPanels: rows of x sharing each weight load (kPanelRowBlocks); 0 for a product never
  // tuned: the instruction set's own (Primitives::rows_per_block)
  int rows_per_block = 0;
  int64_t row_chunk = 0;   // kPanels: rows of x per pass over the weights; 0: all of them in one pass
  ProductKernel kernel = ProductKernel::kPanels;
  bool operator==(const PanelChoice&) const = default;
};

struct PanelShape {
  int64_t rows = 0;  // rows of x, the upper end of a prompt-length bucket
  int64_t out = 0, in = 0;
  DType dtype = DType::kF32;
  bool operator==(const PanelShape&) const = default;
};

class PanelChoices {
 public:
  // Records `choice` for products of shape.out x shape.in weights of shape.dtype with at most
  // shape.rows rows of x (and more than the next smaller recorded row count for that matrix).
  void set(const PanelShape& shape, PanelChoice choice);
  // The choice for a product with `rows` rows of x: the smallest recorded row count that holds them.
  PanelChoice find(int64_t rows, int64_t out, int64_t in, DType dtype) const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    PanelShape shape;
    PanelChoice choice;
  };
  std::vector<Entry> entries_;  // sorted by rows, so the first match is the smallest
};

}  // namespace canrun::cpu
