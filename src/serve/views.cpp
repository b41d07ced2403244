#include "serve/views.h"

#include <algorithm>
#include <string_view>

#include "lab/status.h"
#include "serve/http_error.h"

namespace canrun {
namespace {

// Hub ids are ASCII; the locale's tolower() call per character costs more than the search.
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool contains_ignoring_case(std::string_view text, std::string_view needle) {
  const auto lower_equal = [](char a, char b) { return ascii_lower(a) == ascii_lower(b); };
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), lower_equal) != text.end();
}

template <typename T>
std::optional<double> optional_number(const std::optional<T>& value) {
  return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
}

using NumberKey = std::optional<double> (*)(const ListItem&);
using TextKey = std::optional<std::string_view> (*)(const ListItem&);

// The column's value, chosen once per sort rather than by name on every comparison.
NumberKey number_key(const std::string& key) {
  if (key == "rank") return [](const ListItem& item) { return optional_number(item.rank); };
  if (key == "cores")
    return [](const ListItem& item) { return item.row ? optional_number(item.row->cores) : std::nullopt; };
  if (key == "wall_time_s")
    return [](const ListItem& item) { return item.row ? item.row->wall_time_s : std::nullopt; };
  if (key == "peak_device_memory_bytes")
    return [](const ListItem& item) {
      return item.row ? optional_number(item.row->peak_device_memory_bytes) : std::nullopt;
    };
  if (key == "peak_host_memory_bytes")
    return [](const ListItem& item) {
      return item.row ? optional_number(item.row->peak_host_memory_bytes) : std::nullopt;
    };
  // An encoder check's agreement: an embedding model's min_cosine, a ranker's score difference.
  if (key == "min_cosine")
    return [](const ListItem& item) { return item.row ? item.row->min_cosine : std::nullopt; };
  if (key == "max_score_difference")
    return [](const ListItem& item) { return item.row ? item.row->max_score_difference : std::nullopt; };
  if (key == "sentences_per_s")
    return [](const ListItem& item) { return item.row ? item.row->sentences_per_s : std::nullopt; };
  return nullptr;
}

TextKey text_key(const std::string& key) {
  if (key == "model_id") return [](const ListItem& item) { return std::optional<std::string_view>(*item.model_id); };
  if (key == "result")
    return [](const ListItem& item) {
      return item.row ? std::optional<std::string_view>(item.row->result) : std::nullopt;
    };
  if (key == "weights")
    return [](const ListItem& item) {
      return item.row ? std::optional<std::string_view>(item.row->weights) : std::nullopt;
    };
  return nullptr;
}

// -1, 0 or 1, with a missing value after any present one whatever the direction (2 / -2).
template <typename Key>
int compare_keys(const Key& x, const Key& y) {
  if (x && y) return *x < *y ? -1 : *y < *x ? 1 : 0;
  if (x || y) return x ? -2 : 2;
  return 0;
}

// Orders by the key with missing values last whatever the direction, ties in the view's order
// (items[i].order == i here). Keys are read once up front: reading a column on every
// comparison costs more than the sort itself.
template <typename Key>
void sort_by(std::vector<ListItem>& items, Key (*key_of)(const ListItem&), bool descending) {
  std::vector<Key> keys;
  keys.reserve(items.size());
  for (const ListItem& item : items) keys.push_back(key_of(item));
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int compared = compare_keys(keys[a], keys[b]);
    if (compared == 2 || compared == -2) return compared < 0;
    if (compared != 0) return descending ? compared > 0 : compared < 0;
    return a < b;
  });
  std::vector<ListItem> sorted;
  sorted.reserve(items.size());
  for (const size_t i : order) sorted.push_back(items[i]);
  items = std::move(sorted);
}

void sort_items(std::vector<ListItem>& items, const std::string& key, bool descending) {
  if (const NumberKey number = number_key(key)) sort_by(items, number, descending);
  else sort_by(items, text_key(key), descending);
}

const PopularitySignal& signal_of(const CatalogEntry& entry, View view) {
  return view == View::kTrending ? entry.trending : entry.downloads;
}

std::vector<ListItem> catalog_items(const DatasetSnapshot& snapshot, const PairRows* pair, const ListQuery& query) {
  std::vector<ListItem> items;
  for (const CatalogEntry& entry : snapshot.catalog) {
    if (entry.task != query.task) continue;
    if (query.view == View::kSelected && !entry.selected) continue;
    const std::optional<int64_t> rank = signal_of(entry, query.view).rank;
    if (query.view == View::kTrending && !rank) continue;  // not in that ranking
    items.push_back({&entry.id, pair ? pair->row_of(entry.id) : nullptr, &entry, rank, 0});
  }
  // The ranking's order; unranked models (no downloads count in the snapshot) last, in file order.
  std::stable_sort(items.begin(), items.end(), [](const ListItem& a, const ListItem& b) {
    if (a.rank && b.rank) return *a.rank < *b.rank;
    return a.rank.has_value() && !b.rank.has_value();
  });
  return items;
}

// The catalog entry is left out here: only the rows of the requested page look it up.
std::vector<ListItem> tested_items(const PairRows* pair, const ListQuery& query) {
  std::vector<ListItem> items;
  if (!pair) return items;
  for (const size_t index : pair->by_id) {
    const ResultRow& row = pair->rows[index];
    if (row.task == query.task) items.push_back({&row.model_id, &row, nullptr, {}, 0});
  }
  return items;
}

}  // namespace

const std::vector<std::string>& view_names() {
  static const std::vector<std::string> names = {"selected", "trending", "downloads", "tested"};
  return names;
}

const std::vector<std::string>& sort_keys() {
  static const std::vector<std::string> keys = {"rank",  "model_id",    "result",
                                                "cores", "wall_time_s", "peak_device_memory_bytes",
                                                "peak_host_memory_bytes", "weights", "min_cosine",
                                                "max_score_difference", "sentences_per_s"};
  return keys;
}

ListQuery parse_list_query(const QueryParams& params) {
  const ParamReader reader(params, "/api/rows",
                           {"view", "task", "q", "compiler", "library", "result", "sort", "order", "offset", "limit"});
  ListQuery query;
  const std::string view = reader.choice("view", view_names(), "selected");
  query.view = static_cast<View>(std::find(view_names().begin(), view_names().end(), view) - view_names().begin());
  query.task = reader.choice("task", catalog_tasks(), "text-generation");
  query.search = reader.text("q");
  query.compiler = reader.text("compiler");
  query.library = reader.text("library");
  std::vector<std::string> results = {kUntested};
  for (const StatusInfo& info : all_statuses()) results.emplace_back(info.name);
  query.result = reader.text("result");
  if (!query.result.empty()) reader.choice("result", results, "");
  query.sort = reader.choice("sort", sort_keys(), "rank");
  query.descending = reader.choice("order", {"asc", "desc"}, "asc") == "desc";
  query.offset = reader.integer("offset", 0, 1'000'000'000, 0);
  query.limit = reader.integer("limit", 1, kMaxLimit, query.limit);
  return query;
}

std::vector<ListItem> list_view(const DatasetSnapshot& snapshot, const PairRows* pair, const ListQuery& query) {
  std::vector<ListItem> items =
      query.view == View::kTested ? tested_items(pair, query) : catalog_items(snapshot, pair, query);
  std::erase_if(items, [&](const ListItem& item) {
    if (!query.search.empty() && !contains_ignoring_case(*item.model_id, query.search)) return true;
    if (query.result.empty()) return false;
    return item.row ? item.row->result != query.result : query.result != kUntested;
  });
  for (size_t i = 0; i < items.size(); ++i) items[i].order = static_cast<int64_t>(i);
  if (query.sort == "rank" && !query.descending) return items;  // already in the view's order
  // The Tested view has no ranking: its order is the model id's.
  const bool by_id = query.sort == "rank" && query.view == View::kTested;
  sort_items(items, by_id ? "model_id" : query.sort, query.descending);
  return items;
}

std::string untested_reason(const ListItem& item, const PairRows* pair) {
  if (item.row) return "";
  if (item.entry) {
    const std::string reason = exclusion_reason(*item.entry);
    if (!reason.empty()) return reason;
  }
  if (!pair) return "not checked yet: the dataset has no rows";
  return "selected, not checked yet on " + pair->pair.compiler + " / " + pair->pair.library;
}

Json ranking_json(const DatasetSnapshot& snapshot, const ListQuery& query) {
  if (query.view == View::kTested)
    return {{"signal", nullptr}, {"note", "Every row of the version pair for this task, by model id."}};
  const std::string signal = query.view == View::kTrending ? "trending" : "downloads";
  Json ranking = {{"signal", signal}, {"as_of", nullptr}, {"source", nullptr}, {"note", nullptr}};
  for (const CatalogEntry& entry : snapshot.catalog) {
    if (entry.task != query.task) continue;
    const PopularitySignal& popularity = signal_of(entry, query.view);
    if (popularity.rank) {
      ranking["as_of"] = popularity.as_of;
      ranking["source"] = popularity.source;
      ranking["note"] = nullptr;
      break;
    }
    if (!popularity.note.empty() && ranking["note"].is_null()) ranking["note"] = popularity.note;
  }
  if (query.view == View::kSelected)
    ranking["note"] = "The catalog's curated list (selected: true), in downloads order.";
  return ranking;
}

}  // namespace canrun
