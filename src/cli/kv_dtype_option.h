// `--kv-dtype` of generate and bench: what the KV cache stores. f32 (the default, and what the
// parity tests run), or bf16 / f16: half the cache's bytes, each key and value rounded to
// nearest even as it is written.
#pragma once

#include <string_view>

#include <CLI/CLI.hpp>

#include "tensor/dtype.h"

namespace canrun {

void add_kv_dtype_option(CLI::App& command, DType& kv_dtype);
// "f32", "bf16" or "f16", as the option spells it.
std::string_view kv_dtype_name(DType kv_dtype);

}  // namespace canrun
