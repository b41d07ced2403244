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

QueryResult query_results(const std::vector<DatasetFolder>& folders, const QueryFilter& filter) {
  if (!filter.result.empty() && !parse_status(filter.result)) {
    std::string known;
    for (const StatusInfo& info : all_statuses()) known += (known.empty() ? "" : ", ") + std::string(info.name);
    fail(ErrorKind::kUsage, "--result '" + filter.result + "' is not a status: " + known);
  }
  const std::vector<PairFiles> pairs = list_pairs(folders);
  if (pairs.empty())
    fail(ErrorKind::kUsage, folders_text(folders) + ": no dataset files (<compiler>__<library>.parquet) here");
  std::optional<QueryResult> chosen;
  std::string present;
  for (const PairFiles& pair : pairs) {
    present += (present.empty() ? "" : ", ") + pair.pair.compiler + " / " + pair.pair.library;
    if (!filter.compiler.empty() && pair.pair.compiler != filter.compiler) continue;
    if (!filter.library.empty() && pair.pair.library != filter.library) continue;
    std::set<std::string> yours;
    std::vector<ResultRow> rows = read_pair(pair, &yours);
    if (!chosen || newest(rows) > newest(chosen->rows)) chosen = QueryResult{pair, std::move(rows), std::move(yours)};
  }
  if (!chosen)
    fail(ErrorKind::kUsage, "no dataset for --compiler '" + filter.compiler + "' --library '" + filter.library +
                                "' in " + folders_text(folders) + "; present: " + present);
  const std::string needle = lowercase(filter.model);
  std::erase_if(chosen->rows, [&](const ResultRow& row) {
    return (!needle.empty() && lowercase(row.model_id).find(needle) == std::string::npos) ||
           (!filter.task.empty() && row.task != filter.task) || (!filter.result.empty() && row.result != filter.result) ||
           (!filter.workload.empty() && row.workload != filter.workload) ||
           (!filter.dtype.empty() && !training_dtype(row).starts_with(filter.dtype));
  });
  return *chosen;
}

std::string training_dtype(const ResultRow& row) {
  if (row.workload != "train") return "";
  for (const StackComponent& component : row.software_stack)
    if (component.component == "dtype") return component.version;
  return "";
}

}  // namespace canrun
