// The script stored with every row: from a fresh clone, set up, run the exact check that made
// the row, and compare the result with the one recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canrun {

// Where the checked weights came from, so the script can get them again.
enum class WeightsOrigin {
  kHub,          // the Hugging Face cache: pulled again at `revision`
  kLocalFolder,  // a folder on the machine that made the row
  kSynthetic,    // made from the catalog's config: nothing to get
  kUnavailable,  // none could be had: the check says why again
};

struct ReproduceInputs {
  std::string check_arguments;  // as `canrun check` takes them, shell-quoted
  std::string model_id;
  std::string weights;          // "real", "synthetic", or "" when none were had
  std::string revision;         // empty when unknown
  WeightsOrigin origin = WeightsOrigin::kHub;
  std::string folder;           // kLocalFolder: the folder as the check was given it; kSynthetic: where it is made
  std::string folder_source;    // kLocalFolder: the command that makes it (folder_source_command), or ""
  std::string host;             // the machine that made the row
  std::string expected_result;  // the row's status
  std::string version_pair;     // "<compiler> / <library>"
};

std::string reproduce_script(const ReproduceInputs& inputs);

// What a torch runner row's script needs besides ReproduceInputs (whose check_arguments it
// does not use).
struct TorchReproduceInputs {
  std::string run_py;                 // the exact run.py of the row
  std::vector<std::string> packages;  // pip pins: "torch==2.15.0", ...
  std::optional<std::vector<int32_t>> expected_tokens;  // the row's generated tokens
  std::string expected_error;         // else the stage run.py failed in ("" when none)
  // An encoder row's check ("embedding" or "ranking", encoder_check.h), whose verdict the script
  // computes again from run.py's output and the row's threshold; "" for a generation.
  std::string encoder_protocol;
  double min_cosine = 0;  // the embedding check's threshold
  // A training row's losses per step, each reproduced within loss_tolerance relative.
  std::optional<std::vector<double>> expected_losses;
  double loss_tolerance = 0;
};

// A torch row's script: a fresh venv with the row's packages, the row's weights, its run.py,
// run as `python run.py MODEL_DIR`, its tokens (or failing stage) compared with the row's.
// Synthetic weights are made by canrun (cloned and built at the row's commit).
std::string torch_reproduce_script(const ReproduceInputs& inputs, const TorchReproduceInputs& torch);

// The command that makes `folder`, as the committed script that made it recorded it in
// <folder>/.canrun-source ("bash tools/NAME.sh", run from the repository root); "" when there is
// none or it is not of that form.
std::string folder_source_command(const std::string& folder);

// `text` quoted for bash when it holds anything but [A-Za-z0-9_./:=+@-]: in '...', or in $'...'
// with escapes when it holds control characters, so a quoted value never spans lines.
std::string shell_quote(const std::string& text);

}  // namespace canrun
