// The script stored with every row: from a fresh clone, set up, run the exact check that made
// the row, and compare the result with the one recorded.
#pragma once

#include <string>

namespace canrun {

struct ReproduceInputs {
  std::string check_arguments;  // as `canrun check` takes them, shell-quoted
  std::string model_id;
  std::string weights;          // "real" or "synthetic"
  std::string revision;         // empty when unknown
  std::string expected_result;  // the row's status
  std::string version_pair;     // "<compiler> / <library>"
};

std::string reproduce_script(const ReproduceInputs& inputs);

// `text` quoted for bash when it holds anything but [A-Za-z0-9_./:=+-]: in '...', or in $'...'
// with escapes when it holds control characters, so a quoted value never spans lines.
std::string shell_quote(const std::string& text);

}  // namespace canrun
