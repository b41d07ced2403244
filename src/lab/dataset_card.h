// The dataset card: the README.md beside the Parquet files, with the Hugging Face
// dataset-card YAML header, what each status means and what every column holds.
#pragma once

#include <string>
#include <vector>

#include "lab/dataset.h"

namespace canrun {

// One config of the card: a version pair ("<compiler>__<library>") and the files or globs, relative
// to the folder, that hold its rows (its file, and "<pair>/*.parquet" while sweep shards' parts
// are not merged).
struct CardConfig {
  std::string name;
  std::vector<std::string> data_files;
  std::string where_run;  // run_summary of its rows
};

// Where and how long a config's rows ran: the hosts, their CPU and memory (from the rows'
// software_stack and memory_capacity_bytes), how many checks ran and their summed wall time.
std::string run_summary(const std::vector<ResultRow>& rows);

// The card for a folder holding `configs`.
std::string dataset_card(const std::vector<CardConfig>& configs);

// One line per dataset column; throws for a column without one, so a new column needs words.
const std::string& column_description(const std::string& column);

}  // namespace canrun
