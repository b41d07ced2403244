// Which kernel table runs a model: `ref` (plain f32, double accumulation, every weight widened
// to f32: the yardstick) or `cpu` (the compiled backend: bf16 weights kept as bf16, f32
// accumulation, AVX2). Chosen once, when a model is opened.
#pragma once

#include <string_view>

namespace canrun {

enum class Backend { kRef, kCpu };

std::string_view backend_name(Backend backend);
// Throws Error(kUsage) naming `option` for anything but "ref" or "cpu".
Backend parse_backend(std::string_view name, std::string_view option);

}  // namespace canrun
