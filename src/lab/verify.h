// Verifying a generation against the reference: token-exact, else the top-5 rule of vLLM's
// model tests (check_logprobs_close): at the first position where the two greedy sequences
// differ, each side's token must be among the other side's 5 most likely tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lab/status.h"

namespace canrun {

inline constexpr int kTopK = 5;

// A greedy generation with, for each generated position, the ids of its top-5 logits (highest
// first): what the top-5 rule needs from each side.
struct GenerationTrace {
  std::vector<int32_t> tokens;
  std::vector<std::vector<int32_t>> top_ids;  // one per token
};

struct Verdict {
  Status status = Status::kPass;  // kPass, kPassTop5 or kFailMismatch
  int32_t matching_prefix_length = 0;
  std::string detail;  // for a mismatch: the position and both tokens
};

// PASS when equal; else at the first differing position the top-5 rule decides between
// PASS_TOP5 and FAIL_MISMATCH. Sequences of different lengths that agree up to the shorter one
// fail: one side stopped where the other did not.
Verdict compare_generations(const GenerationTrace& tested, const GenerationTrace& reference);

// The row's `verification`: "exact" when the tokens were equal, "top-5" when the top-5 rule
// decided (PASS_TOP5 or FAIL_MISMATCH).
std::string verification_of(const Verdict& verdict);

}  // namespace canrun
