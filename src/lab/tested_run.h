// The tested half of a check: the checkpoint on the cpu backend, compiled for the fixed prompt
// and kCheckNewTokens (or its plan loaded from the plan cache), generating greedily. It runs in
// the check's own process, or as one worker of a sharded run (sharded_check.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lab/check.h"
#include "lab/model_source.h"
#include "lab/status.h"
#include "lab/verify.h"
#include "parallel/communicator.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"
#include "vision/image_processor.h"
#include "vision/rgb_image.h"
#include "util/json.h"

namespace canrun {

struct CheckPrompt {
  std::vector<int32_t> ids;
  std::optional<Tokenizer> tokenizer;  // none for synthetic weights
  std::string description;             // the row's `prompt` column
  std::optional<PixelValues> pixels;   // an image-text-to-text model's: the check image
};

// The fixed prompt as token ids. Synthetic weights have no tokenizer: their ids are the
// prompt's bytes modulo the vocabulary size, and the description says so. An image-text-to-text
// model (spec.vision) is asked kCheckInstruction about the check image instead: a user turn of
// the image and the instruction through its chat template, the placeholder expanded (synthetic
// weights: the image's tokens, then the instruction's bytes).
CheckPrompt check_prompt(const ModelSource& source, const DecoderSpec& spec);

// The image an image-text-to-text check asks about: 64x48 pixels of colour gradients and a
// bright square, the same on every machine.
RgbImage check_image();

// The check image through the session's vision tower, for its request; null without one.
std::shared_ptr<const VisualInputs> check_visual_inputs(const Session& session, const CheckPrompt& prompt);

// What the tested run adds to a row; a field stays null until the run gets that far.
struct TestedRun {
  GenerationTrace trace;
  std::optional<double> load_time_s;
  std::optional<double> compile_time_s;
  // The same plan taken from the cache by a second session after the first is gone.
  std::optional<double> warm_compile_time_s;
  std::optional<int32_t> recompilations;
  std::optional<bool> plan_cache_hit;  // also null without the plan cache
  std::optional<std::string> plan_source;  // the row's plan_source: built, local_cache or remote_cache
  std::optional<int64_t> peak_activation_bytes;
};

Json tested_run_to_json(const TestedRun& run);
TestedRun tested_run_from_json(const Json& json);  // throws Error(kRuntime) naming the field

// The cpu session of a check's tested run, its plan in `cache_dir`. With `run`, each phase
// sets `stage` and says its step, and the compile phase records the load time there.
SessionOptions tested_session_options(const std::string& cache_dir, std::shared_ptr<Communicator> comm);
SessionOptions tested_session_options(const std::string& cache_dir, const CheckOptions& options,
                                      std::shared_ptr<Communicator> comm, TestedRun& run, CheckStage& stage);

// The tested session's compile statistics into `run`.
void record_compile_stats(const Session& session, const CheckOptions& options, TestedRun& run);

// What the tested run measured, into the dataset's row.
void record_tested_run(const TestedRun& run, ResultRow& row);

// Loads this rank's part of the model (`comm` of size 1: the whole model), compiles it and
// generates, filling `run` as it goes (what it measured stays there when it throws); then opens
// it again to time a warm start from the plan cache (without the plan cache, from a folder of
// the check's own that goes with it). `stage` tells the caller where an exception came from.
// The model and its plan are freed on return, before the reference loads.
void run_tested(const ModelSource& source, const CheckOptions& options, std::shared_ptr<Communicator> comm,
                TestedRun& run, CheckStage& stage);

}  // namespace canrun
