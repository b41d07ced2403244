// Reading the dataset back for `canrun query` and `canrun repro`: choose a version pair,
// filter its rows.
#pragma once

#include <set>
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
  std::string workload;  // "inference" or "train"; empty: any
  std::string dtype;     // a training row's compute dtype, "float32" or "bfloat16"; empty: any
};

struct QueryResult {
  PairFiles files;
  std::vector<ResultRow> rows;
  std::set<std::string> yours;  // the models whose row came from the user's results folder
};

// A training row's compute dtype as its software_stack names it ("float32", "bfloat16 (torch.autocast,
// ...)"); "" for other rows.
std::string training_dtype(const ResultRow& row);

// Of the pairs in `folders` that match filter.compiler/library, the newest (the one with the
// latest row timestamp); its rows that pass the other filters. Errors list the pairs present.
QueryResult query_results(const std::vector<DatasetFolder>& folders, const QueryFilter& filter);

}  // namespace canrun
