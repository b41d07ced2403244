#include "cli/prompt_lookup_flags.h"

#include <cstdio>

namespace canrun {

std::vector<CLI::Option*> add_prompt_lookup_flags(CLI::App& command, PromptLookup& lookup) {
  CLI::Option* draft_tokens =
      command
          .add_option("--prompt-lookup", lookup.draft_tokens,
                  "Speculative decoding: draft up to N tokens per step from where the sequence's latest tokens "
                  "occurred before (in the prompt or the output) and check them in one forward pass; the output "
                  "is that of plain decoding (default 0: off; models whose layers keep a row per position)")
      ->check(CLI::Range(int64_t{0}, int64_t{64}));
  CLI::Option* max_ngram =
      command
          .add_option("--prompt-lookup-ngram", lookup.max_ngram,
                  "With --prompt-lookup: look up the last M tokens, or fewer when they never occurred (default 3)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  return {draft_tokens, max_ngram};
}

std::string prompt_lookup_summary(int64_t drafted_tokens, int64_t accepted_tokens) {
  char text[128];
  const double percent =
      drafted_tokens > 0 ? 100.0 * static_cast<double>(accepted_tokens) / static_cast<double>(drafted_tokens) : 0.0;
  std::snprintf(text, sizeof(text), "prompt lookup: %lld of %lld drafted tokens accepted (%.0f%%)",
                static_cast<long long>(accepted_tokens), static_cast<long long>(drafted_tokens), percent);
  return text;
}

Json prompt_lookup_json(const PromptLookup& lookup, int64_t drafted_tokens, int64_t accepted_tokens) {
  if (lookup.draft_tokens == 0) return nullptr;
  return {{"draft_tokens", lookup.draft_tokens},
          {"max_ngram", lookup.max_ngram},
          {"drafted_tokens", drafted_tokens},
          {"accepted_tokens", accepted_tokens}};
}

}  // namespace canrun
