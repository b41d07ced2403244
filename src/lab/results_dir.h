// A dataset folder: one Parquet file per version pair, and the dataset card (README.md) that
// describes them, kept in step with the files. A sweep shard (--shard K/N) writes its rows into a
// part of its own, <pair>/part-K-of-N.parquet, so that shards on machines that share the folder
// never write one file; merge_parts folds the parts into the pair's file.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lab/dataset.h"

namespace canrun {

// One version pair of a dataset folder: its file and the sweep shards' parts not merged yet.
struct DatasetFile {
  VersionPair pair;
  std::string path;                // <dir>/<compiler>__<library>.parquet; absent while only parts exist
  std::vector<std::string> parts;  // <dir>/<compiler>__<library>/*.parquet, sorted
};

// The pairs of `dir` that have a "<compiler>__<library>.parquet" file, a folder of parts, or
// both, sorted by name; none when `dir` is missing.
std::vector<DatasetFile> list_dataset_files(const std::string& dir);

// `pair` in `dir`, whether or not it has a file or parts yet.
DatasetFile find_dataset_pair(const std::string& dir, const VersionPair& pair);

// The pair's rows, its file and parts combined: one row per model and workload setup
// (workload_setup), the newest check winning (a part's row on a tie, the later part before the
// earlier).
std::vector<ResultRow> read_pair(const DatasetFile& file);

// Adds `row` to its pair's file in `dir` (creating both), or with `part` ("part-2-of-8") to that
// part of the pair, and rewrites the dataset card; an earlier row of the same model and workload
// setup there is replaced.
// Atomic, and serialised with other writers on this machine by a lock file in `dir`.
void record_row(const std::string& dir, const ResultRow& row, const std::string& part = "");

// The dataset the project ships: dataset/ of the source tree canrun was built from, or
// $CANRUN_DATASET. What serve, query and repro read unless --data says otherwise.
std::string shipped_dataset_dir();

// Where `canrun check` and `canrun sweep` record rows unless told otherwise: $CANRUN_RESULTS,
// else results/ in the working folder.
std::string user_results_dir();

// A folder serve, query and diff read, and whether its rows are the user's own checks.
struct DatasetFolder {
  std::string dir;
  bool yours = false;
};

// `data` alone when given (--data), else the dataset canrun ships and then the user's results
// folder (marked yours; it may not exist yet).
std::vector<DatasetFolder> dataset_folders(const std::string& data);

// "DIR" or "DIR and DIR": for messages.
std::string folders_text(const std::vector<DatasetFolder>& folders);

// One version pair over several folders: its files and parts in each folder that has it.
struct PairFiles {
  VersionPair pair;
  std::vector<DatasetFile> files;    // in folder order
  std::vector<bool> yours;           // parallel to files: from a folder of the user's
  std::string file_name() const;     // "<compiler>__<library>.parquet"
  std::vector<std::string> paths() const;  // every file and part that exists, for watching
  std::string where() const;               // each folder's file (and unmerged parts), for messages
};

// The pairs any of `folders` holds, sorted by name.
std::vector<PairFiles> list_pairs(const std::vector<DatasetFolder>& folders);

// The pair's rows over its folders, one per model and workload setup, the newest check winning
// (on a tie, the later folder's); `yours` gets the models whose row came from a folder of the user's.
std::vector<ResultRow> read_pair(const PairFiles& files, std::set<std::string>* yours = nullptr);

struct MergedPair {
  VersionPair pair;
  int64_t parts = 0;   // part files folded in
  int64_t models = 0;  // rows of the pair's file afterwards
};

// Folds every part of every pair in `dir` into the pair's file: one row per model, the newest
// check winning (the part's row on a tie); then removes the parts and rewrites the card. A part
// that cannot be read stops it before anything is written, naming the file.
std::vector<MergedPair> merge_parts(const std::string& dir);

struct RemovedRows {
  VersionPair pair;
  std::vector<std::string> models;  // the models whose row went, sorted
  int64_t rows_left = 0;
};

// Removes the rows of `models` from every pair's file in `dir` (a model the catalog no longer
// selects) and rewrites the card; pairs without such rows are left as they are. A pair with
// unmerged parts stops it before anything is written, naming them.
std::vector<RemovedRows> remove_models(const std::string& dir, const std::set<std::string>& models);

}  // namespace canrun
