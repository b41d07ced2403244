#include "lab/reproduce.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "hub/hub_ref.h"
#include "lab/software_stack.h"
#include "util/json.h"

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

namespace canrun {
namespace {

constexpr const char* kTorchVenv = ".venv-canrun-torch";

// The lines that set $model_dir to the weights a torch row checked.
std::string torch_weights_step(const ReproduceInputs& in) {
  const std::string python = std::string(kTorchVenv) + "/bin/python";
  switch (in.origin) {
    case WeightsOrigin::kHub:
      return "# Real weights: the Hub snapshot the row checked, into the Hugging Face cache ($HF_HUB_CACHE).\n"
             "model_dir=$(" + python + " -c 'import sys; from huggingface_hub import snapshot_download; "
             "print(snapshot_download(sys.argv[1], revision=sys.argv[2] or None))' " +
             shell_quote(in.model_id) + " " + (in.revision.empty() ? std::string("''") : shell_quote(in.revision)) + ")\n";
    case WeightsOrigin::kSynthetic: {
      const std::string leaf = std::filesystem::path(in.folder).filename().string();
      return "# Synthetic weights: made by canrun from the catalog's config with its fixed seed (its check\n"
             "# leaves them in its synthetic cache).\n"
             "git clone \"${CANRUN_REPO:?set CANRUN_REPO to the canrun git URL}\" canrun\n"
             "(cd canrun && git checkout " + source_commit() + " && bash scripts/install_deps.sh && "
             "bash scripts/build.sh build && build/canrun check " + shell_quote(in.model_id) +
             " --synthetic --json > /dev/null)\n"
             "model_dir=\"${XDG_CACHE_HOME:-$HOME/.cache}/canrun/synthetic/\"" + shell_quote(leaf) + "\n";
    }
    case WeightsOrigin::kUnavailable:
      return "echo 'no weights could be had when the row was made' >&2\nexit 1\n";
    case WeightsOrigin::kLocalFolder:
      break;
  }
  std::string how = "# " + comment_text(in.folder) + " is a local folder of " + comment_text(in.host) +
                    (in.folder_source.empty() ? ": copy it here first.\n"
                                              : "; canrun's repository makes it with: " + in.folder_source + "\n");
  return how + "model_dir=" + shell_quote(in.folder) + "\n" + "test -d \"$model_dir\" || { echo " +
         shell_quote(in.folder + ": the folder the row checked is not here") + " >&2; exit 1; }\n";
}

std::string python_list(const std::vector<int32_t>& ids) {
  std::string text = "[";
  for (size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + std::to_string(ids[i]);
  return text + "]";
}

}  // namespace

std::string torch_reproduce_script(const ReproduceInputs& in, const TorchReproduceInputs& torch) {
  const std::string weights = in.weights.empty() ? "no" : in.weights;
  std::string pins;
  for (const std::string& package : torch.packages) pins += " " + shell_quote(package);
  const std::string expectation =
      torch.expected_tokens ? "the tested run's tokens as the row recorded them"
      : torch.expected_losses ? "the tested run's loss at every step as the row recorded it, within its tolerance"
      : !torch.expected_error.empty() ? "run.py failing in its " + torch.expected_error + " stage"
      : torch.encoder_protocol == "embedding" ? "the embeddings' verdict against the reference, by cosine similarity"
      : torch.encoder_protocol == "ranking" ? "the scores' verdict against the reference, by order and difference"
                                            : "run.py printing a result";
  const std::string python = std::string(kTorchVenv) + "/bin/python";
  return "#!/usr/bin/env bash\n"
         "# Reproduces one canrun support-lab row: " + comment_text(in.model_id) + " (" + comment_text(weights) +
         " weights) on " + comment_text(in.version_pair) + ".\n"
         "# Expected result: " + comment_text(in.expected_result) + " (" + comment_text(expectation) + ")\n"
         "set -euo pipefail\n"
         "# A venv of its own, kept for the next run (pip then finds the pins installed).\n"
         "[ -x " + python + " ] || python3 -m venv " + kTorchVenv + "\n" +
         python + " -m pip install --quiet" + pins + "\n" + torch_weights_step(in) +
         "cat > run.py <<'CANRUN_RUN_PY'\n" + torch.run_py + (torch.run_py.ends_with('\n') ? "" : "\n") +
         "CANRUN_RUN_PY\n" +
         python + " run.py \"$model_dir\" > run.json\n" +
         python + " - <<'CANRUN_COMPARE'\n"
         "import json, sys\n"
         "run = json.loads(open('run.json').read().strip().splitlines()[-1])\n"
         "expected_tokens = " + (torch.expected_tokens ? python_list(*torch.expected_tokens) : "None") + "\n"
         "expected_error = " + Json(torch.expected_error).dump() + "\n"
         "expected_losses = " + (torch.expected_losses ? Json(*torch.expected_losses).dump() : "None") + "\n"
         "loss_tolerance = " + Json(torch.loss_tolerance).dump() + "\n"
         "encoder = " + Json(torch.encoder_protocol).dump() + "\n"
         "min_cosine = " + Json(torch.min_cosine).dump() + "\n"
         "expected_result = " + Json(in.expected_result).dump() + "\n"
         "if expected_tokens is not None:\n"
         "    same = run.get('tokens') == expected_tokens\n"
         "    print('tokens: ' + ('the same as the row recorded' if same else 'differ: %s' % run.get('tokens', run.get('error'))))\n"
         "elif expected_losses is not None:\n"
         "    losses = run.get('losses')\n"
         "    if losses is None or len(losses) != len(expected_losses):\n"
         "        print('no losses for %d steps: %s' % (len(expected_losses), run.get('error')))\n"
         "        same = False\n"
         "    else:\n"
         "        worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, expected_losses))\n"
         "        same = worst <= loss_tolerance\n"
         "        print('losses differ from the row\\'s by %.3g relative at most (tolerance %g)' % (worst, loss_tolerance))\n"
         "elif expected_error:\n"
         "    stage = run.get('error', {}).get('stage')\n"
         "    same = stage == expected_error\n"
         "    print('failed in stage %s (the row: %s): %s' % (stage, expected_error, run.get('error', {}).get('message')))\n"
         "elif encoder == 'embedding' and 'embeddings' in run:\n"
         "    def cosine(a, b):\n"
         "        dot = sum(x * y for x, y in zip(a, b))\n"
         "        return dot / (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5\n"
         "    worst = min(cosine(a, b) for a, b in zip(run['embeddings'], run['reference_embeddings']))\n"
         "    verdict = 'PASS' if worst >= min_cosine else 'FAIL_MISMATCH'\n"
         "    print('min cosine %.9f against the reference (threshold %g): %s (the row: %s)' % (worst, min_cosine, verdict, expected_result))\n"
         "    same = verdict == expected_result\n"
         "elif encoder == 'ranking' and 'scores' in run:\n"
         "    tested, reference = run['scores'], run['reference_scores']\n"
         "    order = lambda scores: sorted(range(len(scores)), key=lambda i: -scores[i])\n"
         "    largest = max(abs(a - b) for a, b in zip(tested, reference))\n"
         "    verdict = 'PASS' if order(tested) == order(reference) and largest <= 1e-4 else 'FAIL_MISMATCH'\n"
         "    print('scores differ by %.3g at most, same order: %s: %s (the row: %s)' % (largest, order(tested) == order(reference), verdict, expected_result))\n"
         "    same = verdict == expected_result\n"
         "elif encoder:\n"
         "    print('run.py gave no %s output: %s' % (encoder, run.get('error')))\n"
         "    same = False\n"
         "else:\n"
         "    same = True\n"
         "sys.exit(0 if same else 1)\n"
         "CANRUN_COMPARE\n";
}

}  // namespace canrun
