// `--runner`, `--device`, `--compile` and `--python` of check and sweep: which engine the
// tested half of a check runs on (canrun's own, or PyTorch/Transformers through run.py); and
// `--workload` with the training check's options.
#pragma once

#include <CLI/CLI.hpp>

#include "lab/torch_runner.h"
#include "lab/torch_training.h"

namespace canrun {

void add_runner_options(CLI::App& command, Runner& runner, TorchOptions& torch);

// After parsing: a usage error when a torch option was given without --runner torch, or the
// torch options do not go together.
void check_runner_options(const CLI::App& command, Runner runner, const TorchOptions& torch);

// `--workload` and the training check's --steps, --batch-size, --seq-len, --grad-accum, --dtype
// and --lora.
void add_workload_options(CLI::App& command, Workload& workload, TrainOptions& train);

// After parsing: a usage error naming a training option given without --workload train.
void check_workload_options(const CLI::App& command, Workload workload);

}  // namespace canrun
