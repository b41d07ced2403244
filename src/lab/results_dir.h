// A dataset folder: one Parquet file per version pair, and the dataset card (README.md) that
// describes them, kept in step with the files. A sweep shard (--shard K/N) writes its rows into a
// part of its own, <pair>/part-K-of-N.parquet, so that shards on machines that share the folder
// never write one file; merge_parts folds the parts into the pair's file.
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

// The rows of `pair` in `dir`, or with `part` ("part-2-of-8") that part's; none when the file
// does not exist yet.
std::vector<ResultRow> read_pair_rows(const std::string& dir, const VersionPair& pair, const std::string& part = "");

// Adds `row` to its pair's file in `dir` (creating both) and rewrites the dataset card, or with
// `part` adds it to that part of the pair; an earlier row of the same model there is replaced.
// Atomic, and serialised with other writers on this machine by a lock file in `dir`.
void record_row(const std::string& dir, const ResultRow& row, const std::string& part = "");

struct MergedPair {
  VersionPair pair;
  int64_t parts = 0;   // part files folded in
  int64_t models = 0;  // rows of the pair's file afterwards
};

// Folds every part of every pair in `dir` into the pair's file: one row per model, the newest
// check winning (the part's row on a tie); then removes the parts and rewrites the card. A part
// that cannot be read stops it before anything is written, naming the file.
std::vector<MergedPair> merge_parts(const std::string& dir);

}  // namespace canrun
