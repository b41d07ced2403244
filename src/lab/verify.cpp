#include "lab/verify.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace canrun {
namespace {

bool contains(const std::vector<int32_t>& ids, int32_t id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

}  // namespace

Verdict compare_generations(const GenerationTrace& tested, const GenerationTrace& reference) {
  const size_t common = std::min(tested.tokens.size(), reference.tokens.size());
  size_t i = 0;
  while (i < common && tested.tokens[i] == reference.tokens[i]) ++i;
  Verdict verdict;
  verdict.matching_prefix_length = static_cast<int32_t>(i);
  if (i == common) {
    if (tested.tokens.size() == reference.tokens.size()) return verdict;
    verdict.status = Status::kFailMismatch;
    verdict.detail = "generated " + std::to_string(tested.tokens.size()) + " tokens, the reference " +
                     std::to_string(reference.tokens.size()) + "; the first " + std::to_string(i) + " agree";
    return verdict;
  }
  const int32_t mine = tested.tokens[i];
  const int32_t theirs = reference.tokens[i];
  if (i >= tested.top_ids.size() || i >= reference.top_ids.size())
    fail(ErrorKind::kUsage, "compare_generations: no top-5 ids recorded at position " + std::to_string(i));
  const bool close = contains(reference.top_ids[i], mine) && contains(tested.top_ids[i], theirs);
  verdict.status = close ? Status::kPassTop5 : Status::kFailMismatch;
  verdict.detail = "position " + std::to_string(i) + ": token " + std::to_string(mine) + ", reference " +
                   std::to_string(theirs) + (close ? " (each in the other's top-5)" : " (not in each other's top-5)");
  return verdict;
}

std::string verification_of(const Verdict& verdict) { return verdict.status == Status::kPass ? "exact" : "top-5"; }

}  // namespace canrun
