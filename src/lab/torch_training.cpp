#include "lab/torch_training.h"

#include <sstream>

#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

constexpr size_t kMaxExamplesBytes = size_t{1} << 20;

void require_positive(int32_t value, const char* option, int32_t most) {
  if (value < 1 || value > most)
    fail(ErrorKind::kUsage, std::string(option) + " " + std::to_string(value) + ": expected 1 to " + std::to_string(most));
}

std::vector<std::vector<int32_t>> id_rows(const Json& batch, const char* key) {
  return run_py_field<std::vector<std::vector<int32_t>>>(batch, key, "a list of id lists");
}

}  // namespace

Workload parse_workload(const std::string& name) {
  if (name == "inference") return Workload::kInference;
  if (name == "train") return Workload::kTrain;
  fail(ErrorKind::kUsage, "--workload '" + name + "': expected inference or train");
}

const char* workload_name(Workload workload) { return workload == Workload::kTrain ? "train" : "inference"; }

void validate_train_options(const TrainOptions& options) {
  require_positive(options.steps, "--steps", 100000);
  require_positive(options.batch_size, "--batch-size", 4096);
  require_positive(options.sequence_length, "--seq-len", 1 << 20);
  require_positive(options.gradient_accumulation, "--grad-accum", 4096);
  if (options.dtype != "float32" && options.dtype != "bfloat16")
    fail(ErrorKind::kUsage, "--dtype '" + options.dtype + "': expected float32 or bfloat16");
}

void validate_workload(Workload workload, Runner runner, const TrainOptions& options) {
  if (workload != Workload::kTrain) return;
  if (runner != Runner::kTorch)
    fail(ErrorKind::kUsage, "--workload train needs --runner torch: canrun's own engine runs inference only");
  validate_train_options(options);
}

int32_t restart_step(const TrainOptions& options) { return options.steps / 2; }

const Json& training_examples() {
  static const Json examples = [] {
    const std::string path = std::string(CANRUN_DATA_DIR) + "/train_instructions.jsonl";
    std::istringstream lines(read_text_file(path, kMaxExamplesBytes));
    Json list = Json::array();
    int line_number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++line_number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = path + ":" + std::to_string(line_number);
      const Json example = parse_json(line, where, ErrorKind::kIo);
      if (!example.is_object() || !example.contains("prompt") || !example["prompt"].is_string() ||
          !example.contains("response") || !example["response"].is_string())
        fail(ErrorKind::kIo, where + ": expected {\"prompt\": \"...\", \"response\": \"...\"}");
      list.push_back({{"prompt", example["prompt"]}, {"response", example["response"]}});
    }
    if (list.empty()) fail(ErrorKind::kIo, path + ": no examples");
    return list;
  }();
  return examples;
}

std::string torch_train_script(const std::string& model_dir, const TorchOptions& torch, const TrainOptions& train) {
  return runner_script("torch_train.py", {
                                             {"model_dir", model_dir},
                                             {"device", torch.device},
                                             {"compile", torch.compile},
                                             {"dtype", train.dtype},
                                             {"lora", train.lora},
                                             {"steps", train.steps},
                                             {"batch_size", train.batch_size},
                                             {"sequence_length", train.sequence_length},
                                             {"gradient_accumulation", train.gradient_accumulation},
                                             {"learning_rate", train.learning_rate},
                                             {"seed", train.seed},
                                             {"restart_step", restart_step(train)},
                                             {"examples", training_examples()},
                                         });
}

TrainRunOutput parse_train_output(const std::string& output) {
  const Json json = run_py_result(output);
  TrainRunOutput run;
  run.load_time_s = run_py_optional<double>(json, "load_time_s", "a number");
  run.failure = run_py_failure(json);
  if (run.failure) return run;
  run.losses = run_py_field<std::vector<double>>(json, "losses", "a list of numbers");
  run.grad_norms = run_py_field<std::vector<double>>(json, "grad_norms", "a list of numbers");
  run.step_times_s = run_py_field<std::vector<double>>(json, "step_times_s", "a list of numbers");
  run.reference_losses = run_py_field<std::vector<double>>(json, "reference_losses", "a list of numbers");
  run.reference_grad_norms = run_py_field<std::vector<double>>(json, "reference_grad_norms", "a list of numbers");
  const size_t steps = run.losses.size();
  if (steps == 0) fail(ErrorKind::kRuntime, "run.py output: field 'losses' is empty");
  for (const auto& [key, list] : {std::pair{"grad_norms", &run.grad_norms}, {"step_times_s", &run.step_times_s},
                                  {"reference_losses", &run.reference_losses},
                                  {"reference_grad_norms", &run.reference_grad_norms}})
    if (list->size() != steps)
      fail(ErrorKind::kRuntime, std::string("run.py output: field '") + key + "' has " + std::to_string(list->size()) +
                                    " entries for " + std::to_string(steps) + " steps");
  run.restart_step = run_py_optional<int32_t>(json, "restart_step", "an integer");
  if (run.restart_step) {
    run.resumed_losses = run_py_field<std::vector<double>>(json, "resumed_losses", "a list of numbers");
    if (*run.restart_step < 1 || static_cast<size_t>(*run.restart_step) + run.resumed_losses.size() != steps)
      fail(ErrorKind::kRuntime, "run.py output: field 'resumed_losses' has " +
                                    std::to_string(run.resumed_losses.size()) + " entries after restart_step " +
                                    std::to_string(*run.restart_step) + " of " + std::to_string(steps) + " steps");
  }
  run.tokens_per_step = run_py_field<int64_t>(json, "tokens_per_step", "an integer");
  run.peak_host_memory_bytes = run_py_optional<int64_t>(json, "peak_host_memory_bytes", "an integer");
  run.peak_device_memory_bytes = run_py_optional<int64_t>(json, "peak_device_memory_bytes", "an integer");
  const Json batches = run_py_field<Json>(json, "step0_batches", "a list of batches");
  if (!batches.is_array() || batches.empty())
    fail(ErrorKind::kRuntime, "run.py output: field 'step0_batches' is not a list of batches");
  for (const Json& batch : batches) {
    if (!batch.is_object()) fail(ErrorKind::kRuntime, "run.py output: field 'step0_batches' holds a non-object");
    TrainRunOutput::Batch entry{id_rows(batch, "ids"), id_rows(batch, "labels")};
    for (size_t row = 0; row < entry.ids.size(); ++row)
      if (entry.labels.size() != entry.ids.size() || entry.labels[row].size() != entry.ids[row].size())
        fail(ErrorKind::kRuntime, "run.py output: step0_batches' labels do not match its ids row for row");
    run.step0_batches.push_back(std::move(entry));
  }
  return run;
}

}  // namespace canrun
