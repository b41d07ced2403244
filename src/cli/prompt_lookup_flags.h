// `--prompt-lookup` and `--prompt-lookup-ngram` of generate, bench and serve: speculative decoding
// by prompt lookup (runtime/session.h's PromptLookup), off by default.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/session.h"

namespace canrun {

// Returns the two options, for a caller that groups them.
std::vector<CLI::Option*> add_prompt_lookup_flags(CLI::App& command, PromptLookup& lookup);
// "prompt lookup: A of D drafted tokens accepted (P%)", for a summary line.
std::string prompt_lookup_summary(const GenerationResult& result);

}  // namespace canrun
