// The lab's result statuses: each has exactly one meaning, written here once and used by the
// check, the sweep, the dataset card and the CLI help.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace canrun {

enum class Status {
  kPass,
  kPassTop5,
  kPassJudge,
  kFailLoad,
  kFailCompile,
  kFailRuntime,
  kFailMismatch,
  kFailJudge,
  kTimeout,
  kOom,
  kUnsupportedArchitecture,
  kNotTested,
  kExcluded,
};

struct StatusInfo {
  Status status;
  std::string_view name;     // as stored in the dataset's `result` column, e.g. "PASS_TOP5"
  std::string_view meaning;  // one sentence for the dataset card and --help
};

// Every status in a fixed order (the order of the dataset card's table).
const std::vector<StatusInfo>& all_statuses();

std::string_view status_name(Status status);
std::optional<Status> parse_status(std::string_view name);

// The stage of a check a failure happened in; it decides the status more than the error does.
enum class CheckStage { kLoad, kCompile, kGenerate };

// The status of a check that threw `kind` during `stage`: an unknown model_type is
// UNSUPPORTED_ARCHITECTURE wherever it shows; otherwise the stage names the failure.
Status status_for_error(CheckStage stage, ErrorKind kind);

// A failed check as its row tells it.
struct CheckFailure {
  Status status = Status::kFailRuntime;
  std::string type;     // error_type: the error kind, "std::bad_alloc" or "std::exception"
  std::string message;  // error_message
};

// What the exception being handled means for the row (call it inside a catch block): out of
// memory, a canrun error during `stage`, or any other exception as a runtime failure.
CheckFailure current_failure(CheckStage stage);

}  // namespace canrun
