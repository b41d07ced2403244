// The check protocol's tested and reference halves on the torch runner: run.py (torch_runner.h)
// in a child process, its output read into the row.
#pragma once

#include <functional>
#include <string>

#include "lab/check.h"
#include "lab/dataset.h"
#include "lab/model_source.h"
#include "lab/status.h"
#include "lab/torch_runner.h"

namespace canrun {

// The status of a run.py stage that failed: out of memory wherever it happens; otherwise the
// stage names it (load, compile; any other is a runtime failure, a device torch lacks included,
// as the device is used at run time).
Status status_of_run_py_failure(const TorchRunOutput::Failure& failure);

// The row's status, error type and message ("STAGE: message") for a run.py stage that failed.
void record_run_py_failure(const TorchRunOutput::Failure& failure, ResultRow& row);

// Writes `script` as run.py in a scratch folder, runs it with `python` on `model_dir` to its end,
// records the child's peak memory in `row`, and hands its standard output to `parse`. Throws
// Error(kRuntime) when run.py exits non-zero or `parse` throws, with the end of its stderr.
void run_py(const std::string& python, const std::string& script, const std::string& model_dir,
             ResultRow& row, const std::function<void(const std::string& out)>& parse);

// Runs run.py for `source` on `cores` and fills `row`: times, compile counters, tokens, the
// verdict against the torch cpu eager float32 reference, or the failure of the stage that
// failed (its status, the exception's type and torch's own message). Only a run.py that could
// not be started or printed no usable result throws (Error(kRuntime), naming what was missing).
void run_torch_check(const ModelSource& source, const CheckOptions& options, int cores, ResultRow& row);

}  // namespace canrun
