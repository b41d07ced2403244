// The check protocol for one model: resolve the weights, plan the cores, load for the cpu
// backend, compile, generate 32 tokens greedily from a fixed prompt, verify against a run of the
// ref backend on the same checkpoint, and describe all of it in one dataset row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lab/dataset.h"
#include "lab/model_source.h"
#include "lab/torch_runner.h"
#include "lab/torch_training.h"
#include "lab/verify.h"
#include "util/progress_line.h"

namespace canrun {

// The fixed prompt of every check, and how many tokens are generated from it.
inline constexpr const char* kCheckPrompt = "The capital of France is";
// What an image-text-to-text check asks about its image.
inline constexpr const char* kCheckInstruction = "Describe this image.";
inline constexpr int64_t kCheckNewTokens = 32;

// The test hook: CANRUN_CHECK_FAULT=KIND, or a comma list of KIND:MODEL_ID for some models
// only, with KIND crash|hang|oom, makes the check abort, sleep forever or allocate without
// bound (only under a finite RLIMIT_AS) just before generating.
inline constexpr const char* kFaultVariable = "CANRUN_CHECK_FAULT";

struct CheckOptions {
  std::string model;  // a folder, a Hub id in the Hugging Face cache, or a catalog id
  std::string model_id;  // --model-id: the id of the model a folder or cached snapshot holds
  bool synthetic = false;
  std::string profile = "local";
  std::string profiles_file;  // extra device profiles; empty for none
  std::string catalog;        // empty: default_catalog_path()
  std::string cache_dir;      // plan cache of the compiled run; empty: PlanCache::default_root()
  bool plan_cache = true;     // false: compile without reading or writing the plan cache
  Runner runner = Runner::kCanrun;  // the engine of the tested half
  TorchOptions torch;               // for Runner::kTorch
  Workload workload = Workload::kInference;  // kTrain: the training check (torch runner only)
  TrainOptions train;                        // for Workload::kTrain
  ProgressReport progress;          // the check's steps as they start, a cold compile's too; none: silent
};

// Tells `options.progress`, when set, that `step` starts.
void report_check_step(const CheckOptions& options, const std::string& step);

// The version pair the check's rows belong to: canrun's engine pair, or the torch stack's
// (probing the interpreter, which throws a usage error when it lacks torch or transformers).
VersionPair check_version_pair(const CheckOptions& options);

// Fills the row's tokens, verdict, verification and, unless it passed exactly, its error.
void record_verdict(const GenerationTrace& tested, const GenerationTrace& reference, ResultRow& row);

// For a run whose tokens cannot match the reference exactly (sharded, or not float32) on real
// weights: a FAIL_MISMATCH is decided again by the judge (judge.h) on the generated text, as
// PASS_JUDGE or FAIL_JUDGE with its score. Without the judge's model the row stays as it is and
// its error says why no judge ran.
void judge_mismatch(ResultRow& row);

// Runs the protocol. Every outcome of the model is a row; only bad options throw. A model the
// planner puts on N > 1 cores runs its tested half as N workers (sharded_check.h).
ResultRow run_check(const CheckOptions& options);

// The arguments of `canrun check` (after "check") that repeat this check: model, --model-id,
// --synthetic, --profile, --profiles, --catalog. Not the plan cache options: a plan changes the speed of a
// check, never its tokens.
std::vector<std::string> check_arguments(const ModelSource& source, const CheckOptions& options);

// The columns known before anything runs (identity, weights, prompt, stack, versions, host,
// reproduce script expecting `expected_result`), for rows the sweep writes without a check.
ResultRow initial_row(const ModelSource& source, const CheckOptions& options, const std::string& expected_result);

// Synthetic weights come without a tokenizer: the prompt is its UTF-8 bytes, each taken
// modulo the vocabulary size, as token ids.
std::vector<int32_t> synthetic_prompt_ids(std::string_view prompt, int64_t vocab_size);

}  // namespace canrun
