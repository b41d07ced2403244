#include "lab/training_check.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lab/status.h"
#include "lab/torch_check.h"
#include "runtime/session.h"
#include "util/error.h"

namespace canrun {
namespace {

constexpr int32_t kIgnoredLabel = -100;

double relative_difference(double tested, double reference) {
  return std::abs(tested - reference) / std::max(std::abs(reference), 1e-12);
}

// |tested - reference| relative to the larger of the reference's loss at that step and at step
// 0: a loss that falls towards zero as the model learns the examples would make any drift look
// large. At step 0 both are the same: plain relative difference.
double later_loss_difference(double tested, double reference, double reference_step0) {
  return std::abs(tested - reference) / std::max({std::abs(reference), std::abs(reference_step0), 1e-12});
}

// The q-quantile (0..1) of `values`, by the nearest rank.
double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

void record_times(const TrainRunOutput& run, const std::string& compile, ResultRow& row) {
  const std::vector<double>& times = run.step_times_s;
  row.first_step_time_s = times.front();
  // The steady steps: all but the first, which compiles (torch.compile) and warms the allocator.
  const std::vector<double> steady = times.size() > 1 ? std::vector<double>(times.begin() + 1, times.end()) : times;
  row.step_time_p50_s = quantile(steady, 0.5);
  row.step_time_p95_s = quantile(steady, 0.95);
  const double seconds = std::accumulate(steady.begin(), steady.end(), 0.0);
  if (seconds > 0) row.train_tokens_per_s = static_cast<double>(run.tokens_per_step * static_cast<int64_t>(steady.size())) / seconds;
  if (compile != "none") row.compile_time_s = std::max(0.0, times.front() - *row.step_time_p50_s);
}

// The first of the verdict's checks that fails, as the row's error message; "" when all pass.
std::string first_failed_check(const TrainRunOutput& run, const LossTolerance& tolerance,
                               std::optional<double> native_loss, bool deterministic, ResultRow& row) {
  const auto outside = [](double tested, double reference, double limit) {
    return !(relative_difference(tested, reference) <= limit);  // NaN is outside
  };
  for (size_t step = 0; step < run.losses.size(); ++step) {
    const double limit = step == 0 ? tolerance.first : tolerance.later;
    const double difference = later_loss_difference(run.losses[step], run.reference_losses[step],
                                                    run.reference_losses[0]);
    if (!(difference <= limit)) {
      row.first_step_outside = static_cast<int32_t>(step);
      return "step " + std::to_string(step) + "'s loss " + number(run.losses[step]) + " differs from the reference's " +
             number(run.reference_losses[step]) + " by " + number(difference) + " relative (tolerance " +
             number(limit) + ")";
    }
  }
  if (outside(run.grad_norms[0], run.reference_grad_norms[0], tolerance.first))
    return "step 0's gradient norm " + number(run.grad_norms[0]) + " differs from the reference's " +
           number(run.reference_grad_norms[0]) + " (tolerance " + number(tolerance.first) + " relative)";
  if (native_loss && outside(*native_loss, run.reference_losses[0], tolerance.first))
    return "canrun's own engine computes step 0's loss as " + number(*native_loss) + ", the reference " +
           number(run.reference_losses[0]) + " (tolerance " + number(tolerance.first) + " relative)";
  if (row.restart_check == "differs")
    return "the losses after restarting from step " + std::to_string(*run.restart_step) +
           "'s checkpoint differ from the continuous run's" + (deterministic ? " (expected bit-identical)" : "");
  return "";
}

}  // namespace

LossTolerance loss_tolerance(const std::string& dtype) {
  return dtype == "float32" ? LossTolerance{1e-4, 1e-3} : LossTolerance{1e-2, 5e-2};
}

double native_step0_loss(Session& session, const std::vector<TrainRunOutput::Batch>& batches) {
  double total = 0;
  for (const TrainRunOutput::Batch& batch : batches) {
    double sum = 0;
    int64_t count = 0;
    for (size_t row = 0; row < batch.ids.size(); ++row) {
      const std::vector<int32_t>& ids = batch.ids[row];
      const std::vector<int32_t>& labels = batch.labels[row];
      if (ids.empty()) continue;
      const std::vector<float> logits = session.logits_after_each(ids);
      const int64_t vocab = static_cast<int64_t>(logits.size() / ids.size());
      for (size_t i = 0; i + 1 < ids.size(); ++i) {
        const int32_t label = labels[i + 1];
        if (label == kIgnoredLabel) continue;
        if (label < 0 || label >= vocab)
          fail(ErrorKind::kRuntime, "step 0's label " + std::to_string(label) + " lies outside the vocabulary of " +
                                        std::to_string(vocab));
        const float* row_logits = logits.data() + i * static_cast<size_t>(vocab);
        const float top = *std::max_element(row_logits, row_logits + vocab);
        double exp_sum = 0;
        for (int64_t v = 0; v < vocab; ++v) exp_sum += std::exp(static_cast<double>(row_logits[v] - top));
        sum += std::log(exp_sum) - static_cast<double>(row_logits[label] - top);
        ++count;
      }
    }
    if (count == 0) fail(ErrorKind::kRuntime, "step 0 has a micro-batch without labelled tokens");
    total += sum / static_cast<double>(count);
  }
  return total / static_cast<double>(batches.size());
}

void record_training_run(const TrainRunOutput& run, const std::string& device, const std::string& dtype,
                         const std::string& compile, std::optional<double> native_loss, ResultRow& row) {
  row.load_time_s = run.load_time_s;
  if (run.failure) return record_run_py_failure(*run.failure, row);
  row.train_steps = static_cast<int32_t>(run.losses.size());
  row.train_losses = run.losses;
  row.grad_norms = run.grad_norms;
  row.reference_losses = run.reference_losses;
  row.reference_grad_norms = run.reference_grad_norms;
  row.step_times_s = run.step_times_s;
  row.peak_device_memory_bytes = run.peak_device_memory_bytes;
  if (run.peak_host_memory_bytes) row.peak_host_memory_bytes = run.peak_host_memory_bytes;
  record_times(run, compile, row);
  const LossTolerance tolerance = loss_tolerance(dtype);
  row.loss_tolerance = tolerance.later;
  row.native_step0_loss = native_loss;
  // The same stack from the same checkpoint repeats the same sums only where the device's
  // kernels are deterministic: canrun counts on that for cpu only.
  const bool deterministic = device == "cpu";
  if (run.restart_step) {
    row.restart_step = run.restart_step;
    const std::vector<double> continuous(run.losses.begin() + *run.restart_step, run.losses.end());
    bool within = true;
    for (size_t i = 0; i < continuous.size(); ++i)
      within = within && later_loss_difference(run.resumed_losses[i], continuous[i], run.losses[0]) <= tolerance.later;
    row.restart_check = run.resumed_losses == continuous ? "bit-identical"
                        : within && !deterministic       ? "within tolerance (the device is not deterministic)"
                                                         : "differs";
  }
  row.verification = "losses";
  const std::string failed = first_failed_check(run, tolerance, native_loss, deterministic, row);
  row.result = status_name(failed.empty() ? Status::kPass : Status::kFailMismatch);
  if (!failed.empty()) {
    row.error_type = "mismatch";
    row.error_message = failed;
  }
}

void run_training_check(const ModelSource& source, const CheckOptions& options, ResultRow& row) {
  report_check_step(options, "torch runner: " + std::to_string(options.train.steps) +
                                 " training steps, the restart check and the reference");
  TrainRunOutput run;
  run_py(options.torch.python, torch_train_script(source.dir, options.torch, options.train), source.dir, row,
                [&run](const std::string& out) { run = parse_train_output(out); });
  std::optional<double> native_loss;
  if (!run.failure) {
    report_check_step(options, "step 0's loss on canrun's ref backend");
    Session session(source.dir, uncompiled(Backend::kRef));
    native_loss = native_step0_loss(session, run.step0_batches);
  }
  record_training_run(run, options.torch.device, options.train.dtype, options.torch.compile, native_loss, row);
}

std::vector<StackComponent> training_software_stack(const TorchStack& stack, const TorchOptions& torch,
                                                    const TrainOptions& train) {
  std::vector<StackComponent> components = torch_software_stack(stack, torch);
  for (StackComponent& component : components) {
    if (component.component == "runner")
      component.version = "torch (run.py: from_pretrained, fine-tuning), verified against torch cpu eager float32";
    if (component.component == "dtype")
      component.version = train.dtype == "float32" ? "float32" : "bfloat16 (torch.autocast, float32 weights)";
  }
  char setup[256];
  std::snprintf(setup, sizeof(setup),
                "%s, dropout off, AdamW lr %g decaying linearly, grad norm clipped to 1, %d steps of %d x %d "
                "tokens (accumulating %d), seed %d, restart after step %d",
                train.lora ? "LoRA r8 (peft, all linear layers)" : "full fine-tuning", train.learning_rate,
                train.steps, train.batch_size, train.sequence_length, train.gradient_accumulation, train.seed,
                restart_step(train));
  components.insert(components.begin() + 1, {"training", setup});
  return components;
}

std::vector<std::string> training_arguments(const TrainOptions& train) {
  const TrainOptions defaults;
  std::vector<std::string> args = {"--workload", "train"};
  if (train.steps != defaults.steps) args.insert(args.end(), {"--steps", std::to_string(train.steps)});
  if (train.batch_size != defaults.batch_size) args.insert(args.end(), {"--batch-size", std::to_string(train.batch_size)});
  if (train.sequence_length != defaults.sequence_length)
    args.insert(args.end(), {"--seq-len", std::to_string(train.sequence_length)});
  if (train.gradient_accumulation != defaults.gradient_accumulation)
    args.insert(args.end(), {"--grad-accum", std::to_string(train.gradient_accumulation)});
  if (train.dtype != defaults.dtype) args.insert(args.end(), {"--dtype", train.dtype});
  if (train.lora) args.push_back("--lora");
  return args;
}

}  // namespace canrun
