// MiMo-V2-Flash (Xiaomi): sliding-window layers between full-attention ones (layer 0 and every
// sixth by default), each kind with its own partial rope; the sliding layers have twice the
// key/value heads and a learned sink per head (attention_sink_bias); values narrower than keys
// (v_head_dim) and scaled by attention_value_scale; routed experts (noaux_tc: sigmoid scores
// plus a choice bias, no shared expert) on the layers mlp_layer_types calls sparse.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_mimo_v2_flash(const ConfigReader& config) {
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 152576;
  defaults.intermediate_size = 16384;
  defaults.num_layers = 48;
  defaults.num_heads = 64;
  defaults.num_kv_heads = 4;
  defaults.head_dim = 192;
  defaults.max_positions = 131072;
  defaults.norm_eps = 1e-5;
  DecoderSpec spec = read_llama_like_spec(config, defaults);
  spec.qkv_bias = config.boolean("attention_bias", false);
  spec.value_dim = config.integer("v_head_dim", 128, 1, 1 << 16);
  spec.value_scale = static_cast<float>(config.number("attention_value_scale", 0.707));

  const int64_t window = config.integer("sliding_window", 129, 1, int64_t{1} << 30);
  spec.sliding_window = read_layer_type_windows(config, spec.num_layers, window,
                                                [](int64_t i) { return i != 0 && (i + 1) % 6 != 0; });
  spec.attention_sinks = true;
  spec.names.sinks = "self_attn.attention_sink_bias";
  spec.sink_layers.resize(static_cast<size_t>(spec.num_layers));
  spec.layer_kv_heads.resize(static_cast<size_t>(spec.num_layers));
  for (int64_t i = 0; i < spec.num_layers; ++i) {
    const bool sliding = spec.sliding_window[static_cast<size_t>(i)] > 0;
    spec.sink_layers[i] = sliding;
    spec.layer_kv_heads[i] = sliding ? 2 * spec.num_kv_heads : spec.num_kv_heads;
    if (spec.num_heads % spec.layer_kv_heads[i] != 0)
      config.reject("num_key_value_heads", "must divide num_attention_heads on every layer (sliding layers have "
                                           "twice as many)");
  }
  RopeDefaults full, sliding;
  full.theta = 5000000.0;
  sliding.theta = 10000.0;
  full.partial_rotary_factor = sliding.partial_rotary_factor = 0.334;
  full.max_positions = sliding.max_positions = spec.max_positions;
  read_layer_type_ropes(config, spec, full, sliding);

  NoauxRouterDefaults router;
  router.experts = 256;
  router.top_k = 8;
  router.expert_ffn = 2048;
  router.groups = router.top_k_groups = 1;
  read_noaux_tc_experts(config, spec, router);
  spec.moe.shared_ffn = 0;  // MiMo's MoE has no shared expert, whatever n_shared_experts says
  spec.moe_layers = mlp_layer_types(config, spec.num_layers, 1);
  return spec;
}

const ArchitectureRegistration kMimoV2Flash(
    {"mimo_v2_flash",
     "MiMo-V2-Flash: sliding layers with twice the kv heads and sinks between full ones, narrower scaled values, "
     "sigmoid-routed experts",
     read_mimo_v2_flash,
     {"layer_types sliding_attention|full_attention", "sliding_window", "rope_parameters per layer type",
      "head_dim", "v_head_dim", "attention_value_scale", "attention_bias", "mlp_layer_types dense|sparse",
      "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_group", "topk_group", "norm_topk_prob",
      "routed_scaling_factor", "tie_word_embeddings"},
     {"MiMoV2FlashForCausalLM"}});

}  // namespace
}  // namespace canrun
