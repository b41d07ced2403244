// Every linear-layer matrix of a model's weights under a stable name, for packing them into a
// plan and finding them again when the plan is loaded.
#pragma once

#include <string>

#include "runtime/decoder_weights.h"

namespace canrun {

// Calls visit(name, matrix) for every non-empty matrix of `weights` (DecoderWeights, const or
// not), always in the same order.
template <typename Weights, typename Visit>
void for_each_matrix(Weights& weights, Visit&& visit) {
  const auto present = [&](const std::string& name, auto& m) {
    if (!m.empty()) visit(name, m);
  };
  const auto expert = [&](const std::string& prefix, auto& e) {
    present(prefix + "gate", e.gate);
    present(prefix + "up", e.up);
    present(prefix + "down", e.down);
  };
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    auto& l = weights.layers[i];
    const std::string p = "layers." + std::to_string(i) + ".";
    present(p + "q_proj", l.q_proj);
    present(p + "k_proj", l.k_proj);
    present(p + "v_proj", l.v_proj);
    present(p + "o_proj", l.o_proj);
    present(p + "latent.q_a", l.latent.q_a);
    present(p + "latent.q_b", l.latent.q_b);
    present(p + "latent.kv_a", l.latent.kv_a);
    present(p + "latent.kv_b", l.latent.kv_b);
    present(p + "gate_proj", l.gate_proj);
    present(p + "up_proj", l.up_proj);
    present(p + "down_proj", l.down_proj);
    present(p + "router", l.router);
    for (size_t e = 0; e < l.experts.size(); ++e) expert(p + "experts." + std::to_string(e) + ".", l.experts[e]);
    expert(p + "shared_expert.", l.shared_expert);
    present(p + "shared_expert_gate", l.shared_expert_gate);
  }
  present("lm_head", weights.lm_head);
}

}  // namespace canrun
