// The compile step's options, shared by the commands that run a model (generate, embed, rerank,
// serve, bench): on the
// cpu backend a model is compiled unless --no-compile; plans are kept in the plan cache unless
// --no-plan-cache.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "compile/compiler.h"
#include "kernels/backend.h"

namespace canrun {

struct CompileFlags {
  bool no_compile = false;
  bool no_plan_cache = false;
  std::string cache_dir;
  std::string buckets;
  std::string products;  // "f32" or "bf16"; empty: f32
};

// With `cache_flags` also --no-plan-cache and --cache-dir.
void add_compile_flags(CLI::App* command, CompileFlags& flags, bool cache_flags = true);
// The compile options for `backend`, or nullopt when the model runs uncompiled (ref, or
// --no-compile). Throws Error(kUsage) naming the flag at fault.
std::optional<CompileOptions> compile_options(const CompileFlags& flags, Backend backend);

}  // namespace canrun
