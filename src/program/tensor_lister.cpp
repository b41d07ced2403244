#include "program/tensor_visitor.h"

#include <functional>
#include <numeric>

namespace canrun {
namespace {

int64_t elements(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

int64_t held(MatrixPart part) { return part.rows.count * part.cols.count; }

}  // namespace

WeightMatrix TensorLister::matrix_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) {
  tensors.push_back({name + ".weight", conv1d_ ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in},
                     TensorRole::kProjection, held(part)});
  return {};
}

WeightMatrix TensorLister::plain_part(const std::string& name, int64_t out, int64_t in, MatrixPart part) {
  tensors.push_back({name, {out, in}, TensorRole::kMatrix, held(part)});
  return {};
}

WeightMatrix TensorLister::embeddings(const std::string& name, int64_t rows, int64_t cols) {
  tensors.push_back({name, {rows, cols}, TensorRole::kTable, rows * cols});
  return {};
}

WeightMatrix TensorLister::tied_head(const std::string& name, const WeightMatrix&) {
  for (TensorInfo& tensor : tensors)
    if (tensor.name == name) tensor.role = TensorRole::kMatrix;
  return {};
}

FloatBuffer TensorLister::vector(const std::string& name, int64_t size, TensorRole role) {
  tensors.push_back({name, {size}, role, size});
  return {};
}

FloatBuffer TensorLister::tensor(const std::string& name, std::vector<int64_t> shape) {
  const int64_t n = elements(shape);
  tensors.push_back({name, std::move(shape), TensorRole::kFloatTensor, n});
  return {};
}

FloatBuffer TensorLister::stacked(const std::string& name, std::vector<int64_t> shape, IndexRange kept) {
  add_stacked(name, std::move(shape), TensorRole::kFloatTensor, kept);
  return {};
}

FloatBuffer TensorLister::mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols, IndexRange kept) {
  add_stacked(name + "_blocks", {prefix, rows, cols / 32, 16}, TensorRole::kPacked, kept);
  add_stacked(name + "_scales", {prefix, rows, cols / 32}, TensorRole::kPacked, kept);
  return {};
}

std::vector<int32_t> TensorLister::indices(const std::string& name, std::vector<int64_t> shape, int64_t) {
  const int64_t n = elements(shape);
  tensors.push_back({name, std::move(shape), TensorRole::kIndices, n});
  return {};
}

void TensorLister::add_stacked(const std::string& name, std::vector<int64_t> shape, TensorRole role,
                               IndexRange kept) {
  const int64_t held = elements(shape) / shape.front() * kept.count;
  tensors.push_back({name, std::move(shape), role, held});
}

}  // namespace canrun
