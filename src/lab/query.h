// Reading the dataset back for `canrun query` and `canrun repro`: choose a version pair,
// filter its rows.
#pragma once

#include <string>
#include <vector>

#include "lab/dataset.h"
#include "lab/results_dir.h"

namespace canrun {

struct QueryFilter {
  std::string compiler;  // empty: any
  std::string library;   // empty: any
  std::string model;     // case-insensitive substring of model_id; empty: any
  std::string task;      // exact; empty: any
  std::string result;    // exact status name; empty: any
};

struct QueryResult {
  DatasetFile file;
  std::vector<ResultRow> rows;
};

// Of the files in `dir` whose pair matches filter.compiler/library, the newest (the one with
// the latest row timestamp); its rows that pass the other filters. Errors list the pairs present.
QueryResult query_results(const std::string& dir, const QueryFilter& filter);

}  // namespace canrun
