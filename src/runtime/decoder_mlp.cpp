// The feed-forward blocks: a dense MLP (gated or plain) and routed experts
// (router softmax, optional group limit, top-k, optional renormalisation and scaling, optional
// shared expert). Sharded, a rank computes its intermediate columns of a dense MLP and of the
// shared expert, and only its own experts for the tokens routed to them: `out` is its partial sum.
#include <algorithm>
#include <cmath>

#include "kernels/ref/ops.h"
#include "runtime/decoder_model.h"

namespace canrun {
namespace {

ref::Act kernel_activation(Activation activation) {
  switch (activation) {
    case Activation::kSilu: return ref::Act::kSilu;
    case Activation::kGeluTanh: return ref::Act::kGeluTanh;
    case Activation::kGelu: return ref::Act::kGelu;
    case Activation::kRelu: return ref::Act::kRelu;
  }
  return ref::Act::kSilu;
}

// down(act(gate(x)) * up(x)) for `count` rows; gpt-oss's experts have biases and the clamped SwiGLU.
void gated_mlp(Backend backend, const ExpertWeights& w, ref::Act act, const MoeSpec* clamped, const float* x,
               int64_t count, float* out) {
  const int64_t ffn = w.gate.rows();
  const auto bias = [](const FloatBuffer& b) { return b.empty() ? nullptr : b.data(); };
  std::vector<float> gate(count * ffn), up(count * ffn);
  linear(backend, x, count, w.gate, bias(w.gate_bias), gate.data());
  linear(backend, x, count, w.up, bias(w.up_bias), up.data());
  if (clamped != nullptr)
    ref::clamped_swiglu(gate.data(), up.data(), count * ffn, clamped->swiglu_alpha, clamped->swiglu_limit, gate.data());
  else
    ref::act_mul(act, gate.data(), up.data(), count * ffn, gate.data());
  linear(backend, gate.data(), count, w.down, bias(w.down_bias), out);
}

// deepseek_v2's group_limited_greedy: zeroes the probabilities outside the top_k_groups groups
// with the highest best probability.
void keep_top_groups(const MoeSpec& moe, float* probs) {
  const int64_t size = moe.num_experts / moe.groups;
  std::vector<float> best(static_cast<size_t>(moe.groups));
  for (int64_t g = 0; g < moe.groups; ++g) best[g] = *std::max_element(probs + g * size, probs + (g + 1) * size);
  std::vector<int64_t> kept(static_cast<size_t>(moe.top_k_groups));
  ref::top_k(best.data(), moe.groups, moe.top_k_groups, kept.data());
  for (int64_t g = 0; g < moe.groups; ++g)
    if (std::find(kept.begin(), kept.end(), g) == kept.end()) std::fill_n(probs + g * size, size, 0.0f);
}

}  // namespace

void DecoderModel::mlp_block(const LayerWeights& layer, int64_t layer_index, const float* normed, int64_t count,
                             float* out) const {
  if (layer_is_moe(spec_, layer_index)) return experts_block(layer, normed, count, out);
  const int64_t ffn = layout_.ffn.count;
  if (ffn == 0) {  // more ranks than intermediate columns: this one adds nothing
    std::fill_n(out, count * spec_.hidden_size, 0.0f);
    return;
  }
  const ref::Act act = kernel_activation(spec_.activation);
  std::vector<float> up(count * ffn);
  linear(normed, count, layer.up_proj, layer.up_bias, up.data());
  if (spec_.gated_mlp) {
    std::vector<float> gate(count * ffn);
    linear(normed, count, layer.gate_proj, layer.gate_bias, gate.data());
    ref::act_mul(act, gate.data(), up.data(), count * ffn, up.data());
  } else {
    ref::act(act, up.data(), count * ffn, up.data());
  }
  linear(up.data(), count, layer.down_proj, layer.down_bias, out);
}

void DecoderModel::experts_block(const LayerWeights& layer, const float* normed, int64_t count, float* out) const {
  const MoeSpec& moe = spec_.moe;
  const int64_t hidden = spec_.hidden_size;
  const ref::Act act = kernel_activation(spec_.activation);
  std::vector<float> router(count * moe.num_experts);
  linear(normed, count, layer.router, layer.router_bias, router.data());
  const MoeSpec* clamped = moe.clamped_swiglu ? &moe : nullptr;
  std::vector<float> expert_out(hidden);
  std::vector<int64_t> chosen(static_cast<size_t>(moe.top_k));
  std::vector<float> weight(static_cast<size_t>(moe.top_k));
  for (int64_t t = 0; t < count; ++t) {
    float* probs = router.data() + t * moe.num_experts;
    if (moe.softmax_after_top_k) {
      // gpt-oss: top-k of the logits, then the softmax over those k.
      ref::top_k(probs, moe.num_experts, moe.top_k, chosen.data());
      for (int64_t j = 0; j < moe.top_k; ++j) weight[j] = probs[chosen[j]];
      ref::softmax(weight.data(), moe.top_k);
    } else {
      ref::softmax(probs, moe.num_experts);
      if (moe.groups > 0) keep_top_groups(moe, probs);
      ref::top_k(probs, moe.num_experts, moe.top_k, chosen.data());
      float sum = 0.0f;
      for (int64_t j = 0; j < moe.top_k; ++j) sum += (weight[j] = probs[chosen[j]]);
      if (moe.normalize_top_k)
        for (float& w : weight) w /= sum;
      if (moe.routed_scale != 1.0f)
        for (float& w : weight) w *= moe.routed_scale;
    }
    // transformers adds the experts' outputs in ascending expert order.
    std::vector<int64_t> order(chosen.begin(), chosen.end());
    std::sort(order.begin(), order.end());
    float* y = out + t * hidden;
    std::fill_n(y, hidden, 0.0f);
    for (int64_t e : order) {
      if (!layout_.experts.contains(e)) continue;  // another rank's expert
      const int64_t slot = std::find(chosen.begin(), chosen.end(), e) - chosen.begin();
      gated_mlp(backend_, layer.experts[static_cast<size_t>(e - layout_.experts.first)], act, clamped,
                normed + t * hidden, 1, expert_out.data());
      for (int64_t j = 0; j < hidden; ++j) y[j] += expert_out[j] * weight[slot];
    }
  }
  if (moe.shared_ffn > 0 && layout_.shared_ffn.count > 0) {
    std::vector<float> shared(count * hidden);
    gated_mlp(backend_, layer.shared_expert, act, nullptr, normed, count, shared.data());
    for (int64_t t = 0; t < count; ++t) {
      float gate = 1.0f;
      if (moe.shared_expert_gate) {
        float logit = 0;
        linear(normed + t * hidden, 1, layer.shared_expert_gate, {}, &logit);
        gate = 1.0f / (1.0f + std::exp(-logit));
      }
      for (int64_t j = 0; j < hidden; ++j) out[t * hidden + j] += gate * shared[t * hidden + j];
    }
  }
}

}  // namespace canrun
