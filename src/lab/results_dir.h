// A dataset folder: one Parquet file per version pair, and the dataset card (README.md) that
// describes them, kept in step with the files.
#pragma once

#include <string>
#include <vector>

#include "lab/dataset.h"

namespace canrun {

struct DatasetFile {
  VersionPair pair;
  std::string path;
};

// The "<compiler>__<library>.parquet" files of `dir`, sorted by name; none when `dir` is missing.
std::vector<DatasetFile> list_dataset_files(const std::string& dir);

// The rows of `pair` in `dir`; none when its file does not exist yet.
std::vector<ResultRow> read_pair_rows(const std::string& dir, const VersionPair& pair);

// Adds `row` to its pair's file in `dir` (creating both), replacing an earlier row of the
// same model, and rewrites the dataset card. Atomic, and serialised with other writers by a
// lock file in `dir`.
void record_row(const std::string& dir, const ResultRow& row);

}  // namespace canrun
