// A compiled shape on disk: per run shape of the program (the prefill of a prompt bucket, one
// decode step), its steps with their flops and bytes, and its buffer plan, which the executor
// allocates from when the plan is loaded again.
#pragma once

#include <string>

#include "program/buffer_plan.h"
#include "program/program.h"
#include "util/json.h"

namespace canrun {

Json run_shape_json(const Program& program, const RunShape& shape, const BufferPlan& buffers);

// The buffer plan `json` (run_shape_json's) stores, after checking it is the one `program`
// derives for `tokens` (a plan of another program, or damaged, would place values wrongly).
// Throws Error(kRuntime) naming `where`.
BufferPlan buffer_plan_from_json(const Json& json, const Program& program, int64_t tokens, const std::string& where);

// 32 hex chars over the program's values and steps (names, widths, kinds, wiring): part of the
// key of its compiled shapes, so a changed program never loads an old plan.
std::string program_fingerprint(const Program& program);
// 32 hex chars over its matrices (names, shapes, dtypes): part of the key of its packed weights.
std::string matrices_fingerprint(const Program& program);

}  // namespace canrun
