// The k largest of a run of values, for routing tokens to experts and for the top ids a
// generation records: the one top-k of the project.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace canrun {

// The indices of the k largest values (all of them when k >= size), largest first; ties go to
// the lower index, as torch.topk and torch.argmax do on CPU.
std::vector<int32_t> top_k_indices(std::span<const float> values, int64_t k);

}  // namespace canrun
