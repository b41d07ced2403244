// The committed tiny checkpoints that have transformers goldens (tests/goldens/models/NAME.json
// beside tests/fixtures/models/NAME), by name, sorted.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace canrun {

inline std::vector<std::string> golden_fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(CANRUN_SOURCE_DIR) /
                                                               "tests/goldens/models"))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace canrun
