#include "lab/version_diff.h"

#include <cstdio>
#include <map>

#include "lab/status.h"
#include "util/error.h"

namespace canrun {
namespace {

std::string fixed(double value, const char* format) {
  char text[48];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// A change of `what` when one value is at least `ratio` times the other; true when it grew.
std::optional<bool> compare(double from, double to, double ratio, const std::string& what, const std::string& unit,
                            double scale, std::vector<std::string>& changes) {
  if (from <= 0 || to <= 0 || (to < from * ratio && from < to * ratio)) return std::nullopt;
  changes.push_back(what + " " + fixed(from / scale, "%.3g") + unit + " -> " + fixed(to / scale, "%.3g") + unit +
                    " (" + fixed(to / from, "%.3g") + "x)");
  return to > from;
}

void describe(ModelDiff& diff, const DiffOptions& options) {
  if (!diff.from) return diff.changes.push_back("only in --to (" + diff.to->result + ")");
  if (!diff.to) return diff.changes.push_back("only in --from (" + diff.from->result + ")");
  const ResultRow& a = *diff.from;
  const ResultRow& b = *diff.to;
  if (row_passes(a) && !row_passes(b)) {
    diff.changes.push_back("newly failing: " + a.result + " -> " + b.result);
    diff.regression = true;
  } else if (!row_passes(a) && row_passes(b)) {
    diff.changes.push_back("newly passing: " + a.result + " -> " + b.result);
  } else if (a.result != b.result) {
    diff.changes.push_back("status " + a.result + " -> " + b.result);
  }
  if (a.cores != b.cores) {
    const auto shown = [](std::optional<int32_t> cores) { return cores ? std::to_string(*cores) : "none"; };
    diff.changes.push_back("cores " + shown(a.cores) + " -> " + shown(b.cores));
  }
  // Times and memory compare runs that both got through.
  if (row_passes(a) && row_passes(b)) {
    if (a.wall_time_s && b.wall_time_s &&
        compare(*a.wall_time_s, *b.wall_time_s, options.time_ratio, "wall time", " s", 1, diff.changes) == true)
      diff.regression = true;
    if (a.peak_host_memory_bytes && b.peak_host_memory_bytes &&
        compare(static_cast<double>(*a.peak_host_memory_bytes), static_cast<double>(*b.peak_host_memory_bytes),
                options.memory_ratio, "peak memory", " GB", 1e9, diff.changes) == true)
      diff.regression = true;
  }
  if (a.generated_token_ids && b.generated_token_ids) {
    diff.tokens_agree = *a.generated_token_ids == *b.generated_token_ids;
    if (!*diff.tokens_agree) diff.changes.push_back("generated tokens differ");
  }
}

PairFiles find_pair(const std::vector<PairFiles>& pairs, const VersionPair& pair, const std::string& where,
                    const std::string& option) {
  std::string present;
  for (const PairFiles& files : pairs) {
    if (files.pair.compiler == pair.compiler && files.pair.library == pair.library) return files;
    present += (present.empty() ? "" : ", ") + files.pair.compiler + "__" + files.pair.library;
  }
  fail(ErrorKind::kUsage, option + " " + pair.compiler + "__" + pair.library + ": no such version pair in " + where +
                              "; present: " + (present.empty() ? "none" : present));
}

}  // namespace

bool row_passes(const ResultRow& row) {
  const std::optional<Status> status = parse_status(row.result);
  return status == Status::kPass || status == Status::kPassTop5 || status == Status::kPassJudge;
}

VersionPair parse_version_pair(const std::string& text, const std::string& option) {
  const size_t split = text.find("__");
  if (split == std::string::npos || split == 0 || split + 2 >= text.size() ||
      text.find("__", split + 2) != std::string::npos)
    fail(ErrorKind::kUsage, option + " '" + text + "': expected COMPILER__LIBRARY, as a dataset file is named "
                                                   "(e.g. canrun-0.1.0__cpu-x86_64-avx2-fma)");
  return {text.substr(0, split), text.substr(split + 2)};
}

std::vector<ModelDiff> diff_rows(const std::vector<ResultRow>& from, const std::vector<ResultRow>& to,
                                 const DiffOptions& options) {
  if (!(options.time_ratio >= 1)) fail(ErrorKind::kUsage, "--time-ratio must be at least 1");
  if (!(options.memory_ratio >= 1)) fail(ErrorKind::kUsage, "--memory-ratio must be at least 1");
  std::map<std::pair<std::string, std::string>, ModelDiff> models;
  for (const auto& [rows, newer] : {std::pair{&from, false}, std::pair{&to, true}})
    for (const ResultRow& row : *rows) {
      // A training row pairs with the other pair's training row of the same setup.
      ModelDiff& model = models[{row.model_id, row.task + "\n" + workload_setup(row)}];
      model.model_id = row.model_id;
      model.task = row.task;
      (newer ? model.to : model.from) = row;
    }
  std::vector<ModelDiff> result;
  for (auto& [key, model] : models) {
    describe(model, options);
    result.push_back(std::move(model));
  }
  return result;
}

VersionDiff diff_versions(const std::vector<DatasetFolder>& folders, const VersionPair& from, const VersionPair& to,
                          const DiffOptions& options, const std::string& from_option, const std::string& to_option) {
  const std::vector<PairFiles> pairs = list_pairs(folders);
  const std::string where = folders_text(folders);
  VersionDiff diff{find_pair(pairs, from, where, from_option), find_pair(pairs, to, where, to_option), {}};
  diff.models = diff_rows(read_pair(diff.from), read_pair(diff.to), options);
  return diff;
}

Json model_diff_json(const ModelDiff& model) {
  const auto row = [](const std::optional<ResultRow>& r) { return r ? row_to_json(*r) : Json(nullptr); };
  return {{"model_id", model.model_id},
          {"task", model.task},
          {"changes", model.changes},
          {"regression", model.regression},
          {"tokens_agree", model.tokens_agree ? Json(*model.tokens_agree) : Json(nullptr)},
          {"from", row(model.from)},
          {"to", row(model.to)}};
}

DiffCounts count_changes(const std::vector<ModelDiff>& models) {
  DiffCounts counts;
  for (const ModelDiff& model : models) {
    counts.models += 1;
    counts.changed += !model.changes.empty();
    counts.regressions += model.regression;
    counts.tokens_compared += model.tokens_agree.has_value();
    counts.tokens_agree += model.tokens_agree.value_or(false);
  }
  return counts;
}

}  // namespace canrun
