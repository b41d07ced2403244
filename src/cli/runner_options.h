// `--runner`, `--device`, `--compile` and `--python` of check and sweep: which engine the
// tested half of a check runs on (canrun's own, or PyTorch/Transformers through run.py).
#pragma once

#include <CLI/CLI.hpp>

#include "lab/torch_runner.h"

namespace canrun {

void add_runner_options(CLI::App& command, Runner& runner, TorchOptions& torch);

// After parsing: a usage error when a torch option was given without --runner torch, or the
// torch options do not go together.
void check_runner_options(const CLI::App& command, Runner runner, const TorchOptions& torch);

}  // namespace canrun
