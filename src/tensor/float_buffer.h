// An f32 array that either owns its storage (widened from bf16/f16) or borrows
// it in place from a memory-mapped checkpoint (stored as aligned f32).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace canrun {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  static FloatBuffer owning(std::vector<float> values) {
    FloatBuffer buffer;
    buffer.owned_ = std::move(values);
    buffer.data_ = buffer.owned_.data();
    buffer.size_ = buffer.owned_.size();
    return buffer;
  }
  static FloatBuffer borrowing(const float* data, size_t size) {
    FloatBuffer buffer;
    buffer.data_ = data;
    buffer.size_ = size;
    return buffer;
  }
  FloatBuffer(FloatBuffer&& other) noexcept { *this = std::move(other); }
  FloatBuffer& operator=(FloatBuffer&& other) noexcept {
    owned_ = std::move(other.owned_);  // a moved vector keeps its buffer, so data_ stays valid
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;

  const float* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool borrowed() const { return data_ != nullptr && owned_.empty(); }

 private:
  std::vector<float> owned_;
  const float* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace canrun
