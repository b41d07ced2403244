// What changed between two version pairs of a dataset folder (`canrun diff`): per model, a
// status that started or stopped passing, the cores the planner chose, wall time and peak host
// memory beyond a ratio, and, where both rows hold generated tokens, whether they agree (two
// stacks checked on the same checkpoints cross-check each other).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lab/dataset.h"
#include "lab/results_dir.h"

namespace canrun {

struct DiffOptions {
  double time_ratio = 1.5;    // wall time changed when one row's is at least this many times the other's
  double memory_ratio = 1.2;  // peak host memory likewise
};

struct ModelDiff {
  std::string model_id, task;
  std::optional<ResultRow> from, to;  // empty: the model has no row in that pair
  // One line per change, e.g. "newly failing", "cores 1 -> 2", "wall time 2 s -> 4.1 s (2.05x)".
  std::vector<std::string> changes;
  // Newly failing, or slower or heavier beyond the ratios: what --fail-on-regression counts.
  bool regression = false;
  std::optional<bool> tokens_agree;  // both rows have generated token ids
};

struct VersionDiff {
  PairFiles from, to;
  std::vector<ModelDiff> models;  // every model of either pair, by model id then task
};

// PASS or PASS_TOP5: the statuses a diff calls passing.
bool row_passes(const ResultRow& row);

// "COMPILER__LIBRARY" as a dataset file's name spells a pair; a usage error naming `option` otherwise.
VersionPair parse_version_pair(const std::string& text, const std::string& option);

// Every model of either list of rows, by model id then task. A usage error for a ratio below 1.
std::vector<ModelDiff> diff_rows(const std::vector<ResultRow>& from, const std::vector<ResultRow>& to,
                                 const DiffOptions& options);

// diff_rows over two pairs of `folders`. Errors (usage) name the option of a pair the folders lack
// and list the pairs present.
VersionDiff diff_versions(const std::vector<DatasetFolder>& folders, const VersionPair& from, const VersionPair& to,
                          const DiffOptions& options, const std::string& from_option = "--from",
                          const std::string& to_option = "--to");

// {model_id, task, changes, regression, tokens_agree, from, to}: both rows with every column, or null.
Json model_diff_json(const ModelDiff& model);

struct DiffCounts {
  int models = 0, changed = 0, regressions = 0;
  int tokens_compared = 0, tokens_agree = 0;
};
DiffCounts count_changes(const std::vector<ModelDiff>& models);

}  // namespace canrun
