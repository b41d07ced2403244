// The page's tabs as lists: Selected (the catalog's curated list), Trending and Downloads (the
// catalog's popularity rankings, tested or not) and Tested (every row of the version pair),
// one task at a time, filtered by name and result, sorted by any column, paged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "serve/params.h"
#include "serve/snapshot.h"

namespace canrun {

enum class View { kSelected, kTrending, kDownloads, kTested };

const std::vector<std::string>& view_names();  // "selected", "trending", "downloads", "tested"
const std::vector<std::string>& sort_keys();   // "rank", "model_id", "result", "cores", ...

// The result filter's value for a model without a row in the pair.
inline constexpr const char* kUntested = "UNTESTED";

struct ListQuery {
  View view = View::kSelected;
  std::string task = "text-generation";
  std::string search;    // case-insensitive substring of the model id
  std::string compiler;  // empty: the newest pair (or any, when only library is given)
  std::string library;
  std::string result;  // a status name, kUntested, or empty for any
  std::string sort = "rank";
  bool descending = false;
  int64_t offset = 0;
  int64_t limit = 200;
};

inline constexpr int64_t kMaxLimit = 1000;

// /api/rows parameters: view, task, q, compiler, library, result, sort, order, offset, limit.
ListQuery parse_list_query(const QueryParams& params);

// One line of a view: a model of the ranking or the dataset, with its row when it has one.
struct ListItem {
  const std::string* model_id = nullptr;
  const ResultRow* row = nullptr;          // null: no row in this pair
  const CatalogEntry* entry = nullptr;     // null: not in the catalog, or not looked up (Tested view)
  std::optional<int64_t> rank;             // position in the view's ranking
  int64_t order = 0;                       // the view's own order, the tie-breaker of every sort
};

// The view's items for `task` in `pair` (null: no dataset yet), filtered and sorted per `query`.
std::vector<ListItem> list_view(const DatasetSnapshot& snapshot, const PairRows* pair, const ListQuery& query);

// Why the model shows no result in `pair`, or "" when it has a row.
std::string untested_reason(const ListItem& item, const PairRows* pair);

// The view's ranking: which signal, as of when, from where; or why it is empty.
Json ranking_json(const DatasetSnapshot& snapshot, const ListQuery& query);

}  // namespace canrun
