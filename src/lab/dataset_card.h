// The dataset card: the README.md beside the Parquet files, with the Hugging Face
// dataset-card YAML header, what each status means and what every column holds.
#pragma once

#include <string>
#include <vector>

namespace canrun {

// The card for a folder holding `parquet_files` (file names, one config each).
std::string dataset_card(const std::vector<std::string>& parquet_files);

// One line per dataset column; throws for a column without one, so a new column needs words.
const std::string& column_description(const std::string& column);

}  // namespace canrun
