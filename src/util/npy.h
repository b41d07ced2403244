// NumPy's .npy format (version 1.0) for 2-D float32 arrays: what numpy.load reads back.
#pragma once

#include <cstdint>
#include <string>

namespace canrun {

// Writes data[rows, cols] (row-major) to `path`; throws Error(kIo) naming the path.
void write_npy_f32(const std::string& path, const float* data, int64_t rows, int64_t cols);

}  // namespace canrun
