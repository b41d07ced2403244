#include "util/aligned_buffer.h"

#include <cstdlib>
#include <string>

#include "util/error.h"

namespace canrun {

void AlignedBuffer::Free::operator()(std::byte* p) const { std::free(p); }

std::byte* AlignedBuffer::reserve(int64_t bytes, std::string_view what) {
  if (bytes > bytes_) {
    void* memory = std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64));
    if (memory == nullptr)
      fail(ErrorKind::kRuntime, "cannot allocate " + std::to_string(bytes) + " bytes of " + std::string(what));
    data_.reset(static_cast<std::byte*>(memory));
    bytes_ = bytes;
  }
  return data_.get();
}

}  // namespace canrun
