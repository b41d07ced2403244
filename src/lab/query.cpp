#include "lab/query.h"

#include <algorithm>
#include <cctype>

#include "lab/status.h"

namespace canrun {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

Timestamp newest(const std::vector<ResultRow>& rows) {
  Timestamp latest{};
  for (const ResultRow& row : rows) latest = std::max(latest, row.timestamp);
  return latest;
}

}  // namespace

QueryResult query_results(const std::string& dir, const QueryFilter& filter) {
  if (!filter.result.empty() && !parse_status(filter.result)) {
    std::string known;
    for (const StatusInfo& info : all_statuses()) known += (known.empty() ? "" : ", ") + std::string(info.name);
    fail(ErrorKind::kUsage, "--result '" + filter.result + "' is not a status: " + known);
  }
  const std::vector<DatasetFile> files = list_dataset_files(dir);
  if (files.empty()) fail(ErrorKind::kUsage, dir + ": no dataset files (<compiler>__<library>.parquet) here");
  std::optional<QueryResult> chosen;
  std::string present;
  for (const DatasetFile& file : files) {
    present += (present.empty() ? "" : ", ") + file.pair.compiler + " / " + file.pair.library;
    if (!filter.compiler.empty() && file.pair.compiler != filter.compiler) continue;
    if (!filter.library.empty() && file.pair.library != filter.library) continue;
    std::vector<ResultRow> rows = read_pair(file);
    if (!chosen || newest(rows) > newest(chosen->rows)) chosen = QueryResult{file, std::move(rows)};
  }
  if (!chosen)
    fail(ErrorKind::kUsage, "no dataset for --compiler '" + filter.compiler + "' --library '" + filter.library +
                                "' in " + dir + "; present: " + present);
  const std::string needle = lowercase(filter.model);
  std::erase_if(chosen->rows, [&](const ResultRow& row) {
    return (!needle.empty() && lowercase(row.model_id).find(needle) == std::string::npos) ||
           (!filter.task.empty() && row.task != filter.task) || (!filter.result.empty() && row.result != filter.result);
  });
  return *chosen;
}

}  // namespace canrun
