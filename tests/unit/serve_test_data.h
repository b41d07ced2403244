// A small dataset folder and catalog for the serve tests, written into a fresh temporary folder.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lab/dataset.h"
#include "util/json.h"

namespace canrun::serve_test {

namespace fs = std::filesystem;

inline ResultRow row(const std::string& id, const std::string& result, double wall_time_s, std::optional<int32_t> cores,
                     const std::string& task = "text-generation") {
  ResultRow row;
  row.model_id = id;
  row.task = task;
  row.architecture = "qwen3";
  row.weights = "synthetic";
  row.result = result;
  if (result != "PASS") row.error_message = result + " because of test";
  row.cores = cores;
  row.wall_time_s = wall_time_s;
  row.peak_host_memory_bytes = static_cast<int64_t>(wall_time_s * 1e6);
  row.prompt = "p";
  row.software_stack = {{"canrun", "0.1.0"}};
  row.reproduce_script = "#!/bin/sh\n";
  row.timestamp = Timestamp(std::chrono::seconds(1'800'000'000));
  row.host = "test";
  row.compiler_version = "canrun-0.1.0";
  row.library_version = "ref-x86_64";
  return row;
}

inline Json catalog_line(const std::string& id, const std::string& task, std::optional<int> rank, bool selected,
                         const std::string& model_type = "qwen3") {
  const Json downloads = rank ? Json{{"rank", *rank}, {"as_of", "2026-05-12"}, {"source", "https://example.org/s"}}
                              : Json{{"rank", nullptr}, {"note", "no count in the snapshot"}};
  return {{"id", id},
          {"task", task},
          {"model_type", model_type},
          {"config", Json::object()},
          {"popularity", {{"downloads", downloads}, {"trending", {{"rank", nullptr}, {"note", "no trending signal"}}}}},
          {"selected", selected},
          {"exclusion", selected ? Json(nullptr) : Json("not prioritized yet")}};
}

// results/<pair>.parquet with four text-generation rows and one image-text-to-text row, and a
// catalog: org/a (rank 2), org/b (rank 1), org/c (rank 3, selected, no row), org/d (not
// selected), org/vlm (image-text-to-text); org/local has a row but is not in the catalog.
struct Folder {
  fs::path root;
  fs::path results;
  fs::path catalog;

  explicit Folder(const std::string& name) {
    root = fs::temp_directory_path() / ("canrun_serve_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(root);
    results = root / "results";
    fs::create_directories(results);
    catalog = root / "catalog.jsonl";
    std::ofstream out(catalog);
    for (const Json& line : {catalog_line("org/a", "text-generation", 2, true),
                             catalog_line("org/b", "text-generation", 1, true),
                             catalog_line("org/c", "text-generation", 3, true),
                             catalog_line("org/d", "text-generation", std::nullopt, false),
                             catalog_line("org/vlm", "image-text-to-text", 1, false)})
      out << line.dump() << "\n";
    write_rows({row("org/a", "PASS", 5.0, 1), row("org/b", "TIMEOUT", 600.0, 1),
                row("org/d", "EXCLUDED", 0.0, std::nullopt), row("org/local", "FAIL_RUNTIME", 2.0, 1),
                row("org/vlm", "EXCLUDED", 0.0, std::nullopt, "image-text-to-text")});
  }
  ~Folder() { fs::remove_all(root); }

  fs::path pair_file() const { return results / "canrun-0.1.0__ref-x86_64.parquet"; }
  void write_rows(const std::vector<ResultRow>& rows) const { write_dataset(pair_file().string(), rows); }
};

}  // namespace canrun::serve_test
