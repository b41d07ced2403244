#include "lab/reproduce.h"

#include "lab/software_stack.h"

namespace canrun {

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./:=+-") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string reproduce_script(const ReproduceInputs& in) {
  std::string weights_step;
  if (in.weights == "synthetic")
    weights_step = "# Synthetic weights: made from the catalog's config with canrun's fixed seed; nothing to download.\n";
  else
    weights_step = "# Real weights: the Hub snapshot must be in the Hugging Face cache ($HF_HUB_CACHE), e.g.\n"
                   "#   huggingface-cli download " + shell_quote(in.model_id) +
                   (in.revision.empty() ? "" : " --revision " + in.revision) + "\n";
  return "#!/usr/bin/env bash\n"
         "# Reproduces one canrun support-lab row: " + in.model_id + " (" + in.weights + " weights) on " +
         in.version_pair + ".\n"
         "# Expected result: " + in.expected_result + "\n"
         "set -euo pipefail\n"
         "git clone \"${CANRUN_REPO:?set CANRUN_REPO to the canrun git URL}\" canrun\n"
         "cd canrun\n"
         "git checkout " + source_commit() + "\n"
         "bash scripts/install_deps.sh\n"
         "bash scripts/build.sh build\n" + weights_step +
         "# The check compiles for the cpu backend into the default plan cache ($CANRUN_CACHE_DIR, else\n"
         "# $XDG_CACHE_HOME/canrun/plans); a plan found there changes only how long it takes.\n"
         "build/canrun check " + in.check_arguments + " --json > row.json\n"
         "result=$(python3 -c 'import json; print(json.load(open(\"row.json\"))[\"result\"])')\n"
         "echo \"result: $result (expected " + in.expected_result + ")\"\n"
         "test \"$result\" = " + shell_quote(in.expected_result) + "\n";
}

}  // namespace canrun
