// Prompt lookup: speculative decoding's drafts taken from the sequence itself. When a sequence
// repeats what it has read or written before (code being edited, a document being summarised or
// quoted), the tokens that followed the last occurrence of its latest n tokens are a good guess
// of what comes next; the model checks the guess in one forward pass.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace canrun {

// Up to `max_tokens` ids that followed the latest earlier occurrence of the last n ids of `ids`,
// for n from `max_ngram` down to 1, the first n that occurs; empty when none does.
std::vector<int32_t> prompt_lookup_draft(std::span<const int32_t> ids, int64_t max_ngram, int64_t max_tokens);

}  // namespace canrun
