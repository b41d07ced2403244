// The MODEL argument of generate, tokenize, bench and serve: a path, or a Hub id resolved
// through the Hugging Face cache (downloading into it unless HF_HUB_OFFLINE is set).
#pragma once

#include <CLI/CLI.hpp>

namespace canrun {

// A transform that turns a Hub id ORG/NAME[@REVISION] into its snapshot folder (see
// resolve_model_folder) and leaves a path as it is; add it before the option's path checks.
CLI::Validator hub_model_folder();

}  // namespace canrun
