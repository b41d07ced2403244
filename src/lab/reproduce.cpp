#include "lab/reproduce.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "hub/hub_ref.h"
#include "lab/software_stack.h"

namespace canrun {

namespace {

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

std::string hex_escape(char c) {
  char escape[8];
  std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
  return escape;
}

// A value written into a comment line: a line break in it would end the comment and make the
// rest a command, so control characters are written as escapes.
std::string comment_text(const std::string& text) {
  std::string out;
  for (char c : text) out += is_control(c) ? hex_escape(c) : std::string(1, c);
  return out;
}

}  // namespace

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./:=+@-") == std::string::npos;
  if (plain) return text;
  if (std::none_of(text.begin(), text.end(), is_control)) {
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }
  // Control characters: bash's $'...' quoting, so the quoted text stays on one line.
  std::string quoted = "$'";
  for (char c : text) {
    if (c == '\\' || c == '\'') quoted += std::string("\\") + c;
    else if (c == '\n') quoted += "\\n";
    else if (c == '\t') quoted += "\\t";
    else if (is_control(c)) quoted += hex_escape(c);
    else quoted += c;
  }
  return quoted + "'";
}

std::string folder_source_command(const std::string& folder) {
  std::ifstream in(std::filesystem::path(folder) / ".canrun-source");
  std::string command;
  std::getline(in, command);
  static const std::regex kCommittedScript(R"(bash tools/[A-Za-z0-9_.-]+\.sh)");
  return std::regex_match(command, kCommittedScript) ? command : "";
}

namespace {

// The lines that get the weights the row checked.
std::string weights_step(const ReproduceInputs& in) {
  const std::string at = in.revision.empty() ? "" : "@" + in.revision;
  switch (in.origin) {
    case WeightsOrigin::kSynthetic:
      return "# Synthetic weights: made from the catalog's config with canrun's fixed seed; nothing to download.\n";
    case WeightsOrigin::kUnavailable:
      return "# No weights could be had when the row was made; the check tries the Hub again and says why.\n";
    case WeightsOrigin::kHub:
      return "# Real weights: the Hub snapshot the row checked, into the Hugging Face cache ($HF_HUB_CACHE)\n"
             "# (the same as: hf download " + comment_text(in.model_id) +
             (in.revision.empty() ? "" : " --revision " + comment_text(in.revision)) + ").\n"
             "build/canrun pull " + shell_quote(in.model_id + at) + "\n";
    case WeightsOrigin::kLocalFolder:
      break;
  }
  const std::string missing = "echo " + shell_quote(in.folder + ": the folder the row checked is not here") + " >&2";
  if (!in.folder_source.empty())
    return "# The local folder the row checked, made by a script of this repository.\n"
           "test -d " + shell_quote(in.folder) + " || " + in.folder_source + "\n";
  std::string how = "# " + comment_text(in.folder) + " is a local folder of " + comment_text(in.host) +
                    ": copy it here first.\n";
  if (try_parse_hub_ref(in.model_id))
    how += "# It holds " + comment_text(in.model_id) + "; the published files (which may differ from the folder's):\n"
           "#   build/canrun pull " + comment_text(in.model_id) + "\n";
  return how + "test -d " + shell_quote(in.folder) + " || { " + missing + "; exit 1; }\n";
}

}  // namespace

std::string reproduce_script(const ReproduceInputs& in) {
  const std::string weights = in.weights.empty() ? "no" : in.weights;
  return "#!/usr/bin/env bash\n"
         "# Reproduces one canrun support-lab row: " + comment_text(in.model_id) + " (" + comment_text(weights) +
         " weights) on " + comment_text(in.version_pair) + ".\n"
         "# Expected result: " + comment_text(in.expected_result) + "\n"
         "set -euo pipefail\n"
         "git clone \"${CANRUN_REPO:?set CANRUN_REPO to the canrun git URL}\" canrun\n"
         "cd canrun\n"
         "git checkout " + source_commit() + "\n"
         "bash scripts/install_deps.sh\n"
         "bash scripts/build.sh build\n" + weights_step(in) +
         "# The check compiles for the cpu backend into the default plan cache ($CANRUN_CACHE_DIR, else\n"
         "# $XDG_CACHE_HOME/canrun/plans); a plan found there changes only how long it takes.\n"
         "build/canrun check " + in.check_arguments + " --json > row.json\n"
         "expected=" + shell_quote(in.expected_result) + "\n"
         "result=$(python3 -c 'import json; print(json.load(open(\"row.json\"))[\"result\"])')\n"
         "echo \"result: $result (expected $expected)\"\n"
         "test \"$result\" = \"$expected\"\n";
}

}  // namespace canrun
