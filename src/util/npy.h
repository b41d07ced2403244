// NumPy's .npy format (version 1.0) for 2-D float32 arrays: what numpy.load reads back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canrun {

// Writes data[rows, cols] (row-major) to `path`; throws Error(kIo) naming the path.
void write_npy_f32(const std::string& path, const float* data, int64_t rows, int64_t cols);

struct NpyArray {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;  // row-major
};

// Reads what numpy.save writes for a 2-D little-endian float32 C-order array; throws Error(kIo)
// naming the path for anything else.
NpyArray read_npy_f32(const std::string& path);

}  // namespace canrun
