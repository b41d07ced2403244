// Which kernel table runs a model: `ref` (plain f32 arithmetic, double accumulation, weights
// kept as stored and each widened to f32 as a product reads it: the yardstick) or `cpu` (the
// compiled backend: bf16 weights kept as bf16, f32 accumulation, AVX2/AVX-512). Chosen once,
// when a model is opened.
#pragma once

#include <string_view>

namespace canrun {

enum class Backend { kRef, kCpu };

std::string_view backend_name(Backend backend);
// Throws Error(kUsage) naming `option` for anything but "ref" or "cpu".
Backend parse_backend(std::string_view name, std::string_view option);

}  // namespace canrun
