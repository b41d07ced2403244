// MODEL as generate, tokenize, bench and serve take it: a folder, or a Hub id.
#pragma once

#include <string>

namespace canrun {

// An existing path as it is; else a Hub id ORG/NAME[@REVISION]: its snapshot in the Hugging Face
// cache when there (no network), or downloaded into it (what default_hub_patterns keep, with a
// progress bar on stderr) unless HF_HUB_OFFLINE is set; else the argument unchanged, so the
// caller's "not a folder" error names it.
std::string resolve_model_folder(const std::string& argument);

}  // namespace canrun
