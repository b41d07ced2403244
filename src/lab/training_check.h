// The training check (canrun check --runner torch --workload train): the training run.py
// (torch_training.h) fine-tunes the model on the tested stack, restarts from a checkpoint half
// way in a fresh process, and repeats the steps on torch's cpu in float32 eager as the reference;
// canrun's own engine computes step 0's loss natively as an independent check of that reference.
#pragma once

#include <string>
#include <vector>

#include "lab/check.h"
#include "lab/dataset.h"
#include "lab/model_source.h"
#include "lab/torch_training.h"

namespace canrun {

class Session;

// How far a tested loss may lie from the reference's, relative to it: at step 0 (and the step-0
// gradient norm), and at every later step, where the runs' differences have compounded (there
// relative to the larger of the reference's loss at that step and at step 0).
struct LossTolerance {
  double first = 0;
  double later = 0;
};
// float32: 1e-4 at step 0, 1e-3 later; bfloat16 (autocast against float32): 1e-2, 5e-2.
LossTolerance loss_tolerance(const std::string& dtype);

// The mean cross-entropy of step 0's micro-batches as `session` computes it: per micro-batch,
// the mean over its labelled tokens (labels other than -100, each predicted from the logits after
// the token before it), then the mean over the micro-batches, as transformers' loss does.
double native_step0_loss(Session& session, const std::vector<TrainRunOutput::Batch>& batches);

// Fills `row` from a training run's output: the steps' losses, gradient norms and times, memory,
// the restart check, and the verdict: PASS when step 0's loss and gradient norm lie within the
// first tolerance of the reference's, every later loss within the later one, `native_loss`
// (nullopt: not computed) within the first tolerance of the reference's step 0, and the resumed
// losses are bit-identical to the continuous run's (within the later tolerance, saying so, on a
// device other than cpu); else FAIL_MISMATCH naming the first check outside. A run.py failure
// becomes the row's failure with its stage.
void record_training_run(const TrainRunOutput& run, const std::string& device, const std::string& dtype,
                         const std::string& compile, std::optional<double> native_loss, ResultRow& row);

// Runs the training run.py for `source` and fills `row` (record_training_run), computing step
// 0's loss with canrun's ref backend. Only a run.py that could not be started or printed no
// usable result throws (Error(kRuntime)).
void run_training_check(const ModelSource& source, const CheckOptions& options, ResultRow& row);

// The row's software_stack for a training check: the torch stack, the dtype as trained, and the
// fine-tuning setup.
std::vector<StackComponent> training_software_stack(const TorchStack& stack, const TorchOptions& torch,
                                                    const TrainOptions& train);

// `check` arguments that repeat the training setup: --workload train and the options that differ
// from the defaults.
std::vector<std::string> training_arguments(const TrainOptions& train);

}  // namespace canrun
