// The read-only JSON API over one snapshot. Each handler validates its parameters (HttpError
// 400 naming the parameter, 404 for an unknown model) and returns the response body.
//
//   GET /api/rows     view, task, q, compiler, library, result, sort, order, offset, limit
//   GET /api/model    id (required), compiler, library
//   GET /api/training task, compiler, library (each optional: the training checks' rows)
//   GET /api/pairs    (no parameters)
//   GET /api/catalog  task
//   GET /api/diff     from, to (required, COMPILER__LIBRARY), time_ratio, memory_ratio, all
#pragma once

#include "serve/params.h"
#include "serve/snapshot.h"
#include "util/json.h"

namespace canrun {

Json api_rows(const DatasetSnapshot& snapshot, const QueryParams& params);
Json api_model(const DatasetSnapshot& snapshot, const QueryParams& params);
Json api_training(const DatasetSnapshot& snapshot, const QueryParams& params);
Json api_pairs(const DatasetSnapshot& snapshot, const QueryParams& params);
Json api_catalog(const DatasetSnapshot& snapshot, const QueryParams& params);
Json api_diff(const DatasetSnapshot& snapshot, const QueryParams& params);

// What to install besides canrun to rerun a row of `pair`, with a note saying why.
Json extra_packages(const VersionPair& pair);

// The command that pre-populates the plan cache for the pair's compiler (null for an external
// runner, which has no plan cache), and what it needs.
Json plan_cache(const VersionPair& pair);

}  // namespace canrun
