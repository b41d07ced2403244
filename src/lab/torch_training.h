// The training check's run.py: runners/torch_train.py with one row's parameters (the model, the
// stack, the fine-tuning setup and the committed instruction examples), and what it prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lab/torch_runner.h"

namespace canrun {

// What a check runs: generation (inference, the default) or a fine-tuning run (train).
enum class Workload { kInference, kTrain };

// --workload: "inference" or "train"; a usage error naming the option otherwise.
Workload parse_workload(const std::string& name);
const char* workload_name(Workload workload);

// The fine-tuning setup of a training check.
struct TrainOptions {
  int32_t steps = 20;
  int32_t batch_size = 2;
  int32_t sequence_length = 64;
  int32_t gradient_accumulation = 1;
  bool lora = false;                // LoRA adapters (peft, rank 8, every linear layer) instead of every weight
  std::string dtype = "float32";    // float32, or bfloat16: f32 weights, bf16 compute under torch.autocast
  double learning_rate = 1e-4;      // AdamW's, decaying linearly to zero over the steps
  int32_t seed = 0;
};

// Usage errors naming --steps, --batch-size, --seq-len, --grad-accum or --dtype for a value out
// of range.
void validate_train_options(const TrainOptions& options);

// For a check or sweep: the training workload runs on the torch runner only, with valid options.
void validate_workload(Workload workload, Runner runner, const TrainOptions& options);

// After which step the restart check saves its checkpoint: half way.
int32_t restart_step(const TrainOptions& options);

// The committed instruction examples (data/train_instructions.jsonl): {"prompt", "response"}
// objects. Errors name the file and line.
const Json& training_examples();

// run.py of a training check: runners/torch_train.py with its PARAMETERS filled in.
std::string torch_train_script(const std::string& model_dir, const TorchOptions& torch, const TrainOptions& train);

// What the training run.py printed.
struct TrainRunOutput {
  std::optional<TorchRunOutput::Failure> failure;  // stage: import, device, load, data, compile,
                                                   // forward, backward, optimizer, checkpoint, restart, reference
  std::optional<double> load_time_s;
  std::vector<double> losses, grad_norms, step_times_s;  // the tested run's, per step
  std::vector<double> reference_losses, reference_grad_norms;
  std::optional<int32_t> restart_step;
  std::vector<double> resumed_losses;  // the fresh process's, from restart_step on
  int64_t tokens_per_step = 0;
  std::optional<int64_t> peak_host_memory_bytes, peak_device_memory_bytes;
  // Step 0's micro-batches as canrun scores them: per micro-batch, each row's tokens and labels
  // (-100: no loss there).
  struct Batch {
    std::vector<std::vector<int32_t>> ids, labels;
  };
  std::vector<Batch> step0_batches;
};

// Reads the last line of the training run.py's output; throws Error(kRuntime) naming what is
// missing or malformed.
TrainRunOutput parse_train_output(const std::string& output);

}  // namespace canrun
