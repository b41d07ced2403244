// The check protocol's tested and reference halves on the torch runner: run.py (torch_runner.h)
// in a child process, its output read into the row.
#pragma once

#include <string>

#include "lab/check.h"
#include "lab/dataset.h"
#include "lab/model_source.h"

namespace canrun {

// Runs run.py for `source` on `cores` and fills `row`: times, compile counters, tokens, the
// verdict against the torch cpu eager float32 reference, or the failure of the stage that
// failed (its status, the exception's type and torch's own message). Only a run.py that could
// not be started or printed no usable result throws (Error(kRuntime), naming what was missing).
void run_torch_check(const ModelSource& source, const CheckOptions& options, int cores, ResultRow& row);

}  // namespace canrun
