#include "program/tensor_visitor.h"

namespace canrun {

WeightMatrix TensorLister::matrix_part(const std::string& name, int64_t out, int64_t in, MatrixPart) {
  tensors.push_back({name + ".weight", conv1d_ ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in},
                     TensorRole::kProjection});
  return {};
}

WeightMatrix TensorLister::plain_part(const std::string& name, int64_t out, int64_t in, MatrixPart) {
  tensors.push_back({name, {out, in}, TensorRole::kMatrix});
  return {};
}

WeightMatrix TensorLister::embeddings(const std::string& name, int64_t rows, int64_t cols) {
  tensors.push_back({name, {rows, cols}, TensorRole::kMatrix});
  return {};
}

FloatBuffer TensorLister::vector(const std::string& name, int64_t size, TensorRole role) {
  tensors.push_back({name, {size}, role});
  return {};
}

FloatBuffer TensorLister::tensor(const std::string& name, std::vector<int64_t> shape) {
  tensors.push_back({name, std::move(shape), TensorRole::kMatrix});
  return {};
}

FloatBuffer TensorLister::mxfp4(const std::string& name, int64_t prefix, int64_t rows, int64_t cols) {
  tensors.push_back({name + "_blocks", {prefix, rows, cols / 32, 16}, TensorRole::kPacked});
  tensors.push_back({name + "_scales", {prefix, rows, cols / 32}, TensorRole::kPacked});
  return {};
}

}  // namespace canrun
