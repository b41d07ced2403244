#include "cli/runner_options.h"

#include <cstdlib>
#include <string>

namespace canrun {

void add_runner_options(CLI::App& command, Runner& runner, TorchOptions& torch) {
  command
      .add_option_function<std::string>(
          "--runner", [&runner](const std::string& name) { runner = parse_runner(name); },
                  "The engine of the tested run: canrun (default: its compiled cpu backend, verified against its "
                  "ref backend), or torch: a standalone run.py on PyTorch/Transformers (from_pretrained, static "
                  "cache, torch.compile), verified against torch's cpu eager float32; its rows go to the stack's "
                  "own version pair, e.g. torch-2.15.0+inductor-cpu__transformers-5.23.0")
      ->type_name("canrun|torch");
  command.add_option("--device", torch.device, "With --runner torch: cpu (default, float32), cuda or neuron (bfloat16)")
      ->check(CLI::IsMember({"cpu", "cuda", "neuron"}));
  command
      .add_option("--compile", torch.compile,
                  "With --runner torch: torch.compile backend none (default: eager), inductor, or neuron (with "
                  "--device neuron)")
      ->check(CLI::IsMember({"none", "inductor", "neuron"}));
  const char* python = std::getenv("CANRUN_TORCH_PYTHON");
  if (python && *python) torch.python = python;
  command.add_option("--python", torch.python,
                     "With --runner torch: the Python interpreter with torch and transformers (default: "
                     "$CANRUN_TORCH_PYTHON, else python3)");
}

void check_runner_options(const CLI::App& command, Runner runner, const TorchOptions& torch) {
  if (runner == Runner::kTorch) {
    validate_torch_options(torch);
    return;
  }
  for (const char* option : {"--device", "--compile", "--python"})
    if (command.count(option) > 0) fail(ErrorKind::kUsage, std::string(option) + " needs --runner torch");
}

void add_workload_options(CLI::App& command, Workload& workload, TrainOptions& train) {
  command
      .add_option_function<std::string>(
          "--workload", [&workload](const std::string& name) { workload = parse_workload(name); },
          "inference (default: the generation check), or train: the training check with --runner torch "
          "(fine-tuning steps on the committed instruction examples, a restart from a checkpoint half way, "
          "verified against torch cpu float32 eager and canrun's own step-0 loss)")
      ->type_name("inference|train");
  command.add_option("--steps", train.steps, "With --workload train: optimizer steps (default 20)");
  command.add_option("--batch-size", train.batch_size, "With --workload train: sequences per micro-batch (default 2)");
  command.add_option("--seq-len", train.sequence_length,
                     "With --workload train: tokens per sequence, padded or cut to it (default 64)");
  command.add_option("--grad-accum", train.gradient_accumulation,
                     "With --workload train: micro-batches whose gradients add up to one step (default 1)");
  command.add_option("--dtype", train.dtype,
                     "With --workload train: float32 (default) or bfloat16 (float32 weights, bfloat16 compute under "
                     "torch.autocast)")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  command.add_flag("--lora", train.lora,
                   "With --workload train: train LoRA adapters (peft, rank 8, every linear layer) instead of every "
                   "weight");
}

void check_workload_options(const CLI::App& command, Workload workload) {
  if (workload == Workload::kTrain) return;
  for (const char* option : {"--steps", "--batch-size", "--seq-len", "--grad-accum", "--dtype", "--lora"})
    if (command.count(option) > 0) fail(ErrorKind::kUsage, std::string(option) + " needs --workload train");
}

}  // namespace canrun
