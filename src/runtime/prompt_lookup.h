// Prompt lookup: speculative decoding's drafts taken from the sequence itself. When a sequence
// repeats what it has read or written before (code being edited, a document being summarised or
// quoted), the tokens that followed the last occurrence of its latest n tokens are a good guess
// of what comes next; the model checks the guess in one forward pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace canrun {

// Prompt lookup as a generation asks for it (GenerateRequest): each decode step drafts up to
// `draft_tokens` tokens from an earlier occurrence of the sequence's last `max_ngram` (or fewer)
// tokens and runs them in one forward pass; a drafted token stands while it is the token the
// model chooses after the ones before it, and the first that is not gives way to the model's
// choice. Every token is chosen from the logits plain decoding would have, with the same draws,
// so greedy and seeded output is plain decoding's. For models whose state keeps a row per
// position (attention caches), and a sequence stepped alone (in a batch of several decoding
// together, one token per step).
struct PromptLookup {
  int64_t draft_tokens = 0;  // 0: off
  int64_t max_ngram = 3;
};

// Up to `max_tokens` ids that followed the latest earlier occurrence of the last n ids of `ids`,
// for n from `max_ngram` down to 1, the first n that occurs; empty when none does.
std::vector<int32_t> prompt_lookup_draft(std::span<const int32_t> ids, int64_t max_ngram, int64_t max_tokens);

}  // namespace canrun
