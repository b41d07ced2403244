// `--prompt-lookup` and `--prompt-lookup-ngram` of generate, bench and serve: speculative decoding
// by prompt lookup (runtime/session.h's PromptLookup), off by default.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/prompt_lookup.h"
#include "util/json.h"

namespace canrun {

// Returns the two options, for a caller that groups them.
std::vector<CLI::Option*> add_prompt_lookup_flags(CLI::App& command, PromptLookup& lookup);
// "prompt lookup: A of D drafted tokens accepted (P%)", for a summary line.
std::string prompt_lookup_summary(int64_t drafted_tokens, int64_t accepted_tokens);
// The --json object: the settings and the counts; null when prompt lookup is off.
Json prompt_lookup_json(const PromptLookup& lookup, int64_t drafted_tokens, int64_t accepted_tokens);

}  // namespace canrun
