// MODEL as generate, tokenize, bench and serve take it: a folder, or a Hub id.
#pragma once

#include <optional>
#include <string>

#include "hub/hub_ref.h"

namespace canrun {

// An existing path as it is; else a Hub id ORG/NAME[@REVISION]: its snapshot in the Hugging Face
// cache when there (no network), or downloaded into it (what default_hub_patterns keep, with a
// progress bar on stderr) unless HF_HUB_OFFLINE is set; else the argument unchanged, so the
// caller's "not a folder" error names it. A Hub id whose first part is a folder here and that the
// cache lacks is a usage error (mistyped_local_folder).
std::string resolve_model_folder(const std::string& argument);

// Why `argument`, a Hub id by its form, is taken for a mistyped local folder ("models/SmolLM2"
// where models/ is a folder here); null when its first part is no folder here.
std::optional<std::string> mistyped_local_folder(const std::string& argument, const HubRef& ref);

}  // namespace canrun
