// Memory that is 64-byte aligned and grows to the largest size asked of it, then stays: a buffer
// reused call after call (activations, kernel scratch) page-faults only when it grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace canrun {

class AlignedBuffer {
 public:
  // At least `bytes` bytes; the contents are kept only while the size does not grow. Out of
  // memory: Error(kRuntime) saying how many bytes of `what` could not be allocated.
  std::byte* reserve(int64_t bytes, std::string_view what);
  int64_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
  int64_t bytes_ = 0;
};

}  // namespace canrun
