// gpt-oss: Llama-style blocks with attention sinks and biases, alternating sliding-window
// layers, yarn rope, and routed experts that take the softmax over the top-k router logits and
// use a clamped SwiGLU; expert weights as published in MXFP4 (quantization_config mxfp4) or
// unquantised.
#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/moe_common.h"
#include "models/registry.h"

namespace canrun {
namespace {

DecoderSpec read_gpt_oss(const ConfigReader& config) {
  bool mxfp4 = false;
  Json plain = config.json();
  if (config.has("quantization_config")) {
    const ConfigReader quant = config.object("quantization_config");
    const std::string method = quant.string("quant_method", std::string("unknown"));
    if (method != "mxfp4")
      reject_option(config, "quantization_config", "quant_method '" + method + "'", "gpt_oss",
                    "supported: mxfp4 or none");
    mxfp4 = true;
    plain.erase("quantization_config");
  }
  // transformers' GptOssConfig: yarn with these parameters when the config gives none.
  if (!config.has("rope_parameters") && !config.has("rope_scaling"))
    plain["rope_parameters"] = {{"rope_type", "yarn"},      {"factor", 32.0},
                                {"beta_fast", 32.0},         {"beta_slow", 1.0},
                                {"truncate", false},         {"original_max_position_embeddings", 4096}};
  const ConfigReader reader(plain, config.path());
  LlamaLikeDefaults defaults;
  defaults.vocab_size = 201088;
  defaults.hidden_size = 2880;
  defaults.intermediate_size = 2880;
  defaults.num_layers = 36;
  defaults.num_heads = 64;
  defaults.num_kv_heads = 8;
  defaults.head_dim = 64;
  defaults.max_positions = 131072;
  defaults.norm_eps = 1e-5;
  defaults.rope_theta = 150000.0;
  DecoderSpec spec = read_llama_like_spec(reader, defaults);
  const bool attention_bias = reader.boolean("attention_bias", true);
  spec.qkv_bias = attention_bias;
  spec.o_bias = attention_bias;
  spec.attention_sinks = true;
  const int64_t window = sliding_window_or_null(reader, 128);
  spec.sliding_window = read_layer_type_windows(reader, spec.num_layers, window,
                                                [](int64_t i) { return (i + 1) % 2 != 0; });
  MoeKeys keys;
  keys.num_experts = "num_local_experts";
  keys.num_experts_alias = "num_experts";
  keys.default_experts = 128;
  keys.default_top_k = 4;
  keys.expert_ffn = nullptr;
  keys.always_normalize = false;
  spec.moe = read_moe(reader, spec, keys);
  spec.moe.router_bias = true;
  spec.moe.softmax_after_top_k = true;
  spec.moe.fused_3d_experts = true;
  spec.moe.mxfp4 = mxfp4;
  spec.moe.clamped_swiglu = true;
  spec.moe.swiglu_alpha = static_cast<float>(reader.number("swiglu_alpha", 1.702));
  spec.moe.swiglu_limit = static_cast<float>(reader.number("swiglu_limit", 7.0));
  spec.moe_layers.assign(static_cast<size_t>(spec.num_layers), true);
  spec.names.router = "mlp.router";
  return spec;
}

const ArchitectureRegistration kGptOss({"gpt_oss",
                                        "gpt-oss: attention sinks, alternating sliding window, clamped SwiGLU experts, MXFP4",
                                        read_gpt_oss,
                                        {"quantization_config mxfp4", "num_local_experts", "num_experts_per_tok",
                                         "swiglu_alpha", "swiglu_limit", "sliding_window", "layer_types",
                                         "attention_bias", "rope yarn (default)|default|linear|dynamic|llama3"}, {"GptOssForCausalLM"}});

}  // namespace
}  // namespace canrun
