// MiniMax-M2: GQA attention with RMSNorm over all of q and all of k (before the heads split),
// rotary on the first rotary_dim dims of each head; routed experts on every layer in Mixtral's
// layout (w1 gate, w3 up, w2 down), chosen by sigmoid scores plus e_score_correction_bias and
// weighted by the unbiased scores renormalised over the k chosen.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_minimax_m2(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 200064;
  defaults.hidden_size = 3072;
  defaults.intermediate_size = 1536;
  defaults.num_layers = 62;
  defaults.num_heads = 48;
  defaults.num_kv_heads = 8;
  defaults.head_dim = 128;
  defaults.max_positions = 196608;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  // Published checkpoints give partial rotary as rotary_dim; transformers turns it into
  // partial_rotary_factor = rotary_dim / head_dim unless a factor is given.
  if (config.has("rotary_dim")) {
    RopeDefaults rope;
    rope.partial_rotary_factor =
        static_cast<double>(config.integer("rotary_dim", std::nullopt, 2, spec.head_dim)) / spec.head_dim;
    rope.max_positions = spec.max_positions;
    spec.rope = read_rope_spec(config, spec.head_dim, rope);
  }
  spec.qk_norm = true;
  spec.qk_norm_kind = QkNorm::kWhole;
  MoeKeys keys;
  keys.num_experts = "num_local_experts";
  keys.num_experts_alias = "num_experts";
  keys.default_experts = 256;
  keys.default_top_k = 8;
  keys.expert_ffn = nullptr;
  keys.always_normalize = true;
  spec.moe = read_moe(config, spec, keys);
  if (spec.moe.num_experts < 1) config.reject("num_local_experts", "must be at least 1");
  spec.moe.sigmoid_scores = true;
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), true);
  use_mixtral_expert_names(spec.names);
  spec.names.score_bias = "block_sparse_moe.e_score_correction_bias";
  return spec;
}

const ArchitectureRegistration kMinimaxM2(
    {"minimax_m2", "MiniMax-M2: q/k RMSNorm over all heads, partial rotary, sigmoid-routed experts on every layer",
     read_minimax_m2,
     {"head_dim", "rotary_dim or partial_rotary_factor", "num_local_experts", "num_experts_per_tok",
      "rope default|linear|dynamic|yarn|llama3", "tie_word_embeddings"},
     {"MiniMaxM2ForCausalLM"}});

}  // namespace
}  // namespace canrun
