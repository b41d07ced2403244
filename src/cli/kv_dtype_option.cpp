#include "cli/kv_dtype_option.h"

#include <map>
#include <string>

namespace canrun {

void add_kv_dtype_option(CLI::App& command, DType& kv_dtype) {
  const std::map<std::string, DType> choices = {{"f32", DType::kF32}, {"bf16", DType::kBF16}, {"f16", DType::kF16}};
  command
      .add_option("--kv-dtype", kv_dtype,
                  "What the KV cache stores: f32 (default), or bf16 / f16 (half the bytes; keys and values "
                  "rounded to nearest even as they are written)")
      ->transform(CLI::CheckedTransformer(choices));
}

std::string_view kv_dtype_name(DType kv_dtype) {
  switch (kv_dtype) {
    case DType::kF32: return "f32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF8E4M3:
    case DType::kI8:
    case DType::kI4: break;  // not offered for the cache
  }
  return "f32";
}

}  // namespace canrun
