#include "lab/status.h"

#include <algorithm>
#include <exception>
#include <new>

namespace canrun {

const std::vector<StatusInfo>& all_statuses() {
  static const std::vector<StatusInfo> kStatuses = {
      {Status::kPass, "PASS",
       "Loaded, compiled and generated 32 tokens greedily from the fixed prompt on the cores the planner chose (`cpu` backend), and every "
       "token equals the reference (`ref` backend, f32) run of the same checkpoint's weights."},
      {Status::kPassTop5, "PASS_TOP5",
       "Generated, and the sequences differ, but at the first differing position each side's token is among the "
       "other side's 5 most likely tokens (the rule of vLLM's model tests); matching_prefix_length says where they "
       "part."},
      {Status::kPassJudge, "PASS_JUDGE",
       "A run on real weights whose tokens cannot be compared with the reference exactly (sharded, or in "
       "bfloat16 on a device) failed the top-5 rule, and the judge model scores its text as fluent "
       "(judge_score at or above the threshold in `judge`)."},
      {Status::kFailLoad, "FAIL_LOAD",
       "The checkpoint could not be read or built into a model (missing or malformed config, weights or "
       "tokenizer, an unsupported config option)."},
      {Status::kFailCompile, "FAIL_COMPILE", "The model loaded but could not be compiled into a plan."},
      {Status::kFailRuntime, "FAIL_RUNTIME",
       "Generation failed: an error while running, or the check's process crashed (the signal is in "
       "error_message)."},
      {Status::kFailMismatch, "FAIL_MISMATCH",
       "Generated, but the tokens differ from the reference and fail the top-5 rule at the first differing "
       "position."},
      {Status::kFailJudge, "FAIL_JUDGE",
       "Such a run (see PASS_JUDGE), and the judge model scores its text below the threshold: not fluent."},
      {Status::kTimeout, "TIMEOUT", "The check did not finish within the sweep's wall-time limit and was killed."},
      {Status::kOom, "OOM",
       "The check ran out of memory: an allocation failed under the sweep's memory limit, or the kernel killed "
       "the process."},
      {Status::kUnsupportedArchitecture, "UNSUPPORTED_ARCHITECTURE",
       "canrun has no implementation of this model_type yet; nothing was run."},
      {Status::kNotTested, "NOT_TESTED",
       "Deliberately not run, with the reason in error_message (e.g. no core count of the device profile "
       "holds it). Neither a pass nor a failure."},
      {Status::kExcluded, "EXCLUDED",
       "Excluded by the catalog (its exclusion reason is in error_message); nothing was run."},
  };
  return kStatuses;
}

std::string_view status_name(Status status) {
  for (const StatusInfo& info : all_statuses())
    if (info.status == status) return info.name;
  fail(ErrorKind::kUsage, "unknown status value " + std::to_string(static_cast<int>(status)));
}

std::optional<Status> parse_status(std::string_view name) {
  const auto& statuses = all_statuses();
  const auto found = std::find_if(statuses.begin(), statuses.end(), [&](const StatusInfo& i) { return i.name == name; });
  if (found == statuses.end()) return std::nullopt;
  return found->status;
}

Status status_for_error(CheckStage stage, ErrorKind kind) {
  if (kind == ErrorKind::kUnsupportedArchitecture) return Status::kUnsupportedArchitecture;
  switch (stage) {
    case CheckStage::kLoad: return Status::kFailLoad;
    case CheckStage::kCompile: return Status::kFailCompile;
    case CheckStage::kGenerate: return Status::kFailRuntime;
  }
  return Status::kFailRuntime;
}

CheckFailure current_failure(CheckStage stage) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return {Status::kOom, "std::bad_alloc", "an allocation failed (out of memory)"};
  } catch (const Error& e) {
    return {status_for_error(stage, e.kind()), std::string(error_kind_name(e.kind())), e.what()};
  } catch (const std::exception& e) {
    return {status_for_error(stage, ErrorKind::kRuntime), "std::exception", e.what()};
  }
}

}  // namespace canrun
