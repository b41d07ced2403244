#include "models/encoder_common.h"

#include "models/families_common.h"
#include "models/llama_like.h"
#include "models/rope.h"

namespace canrun {

DecoderSpec read_bert_sizes(const ConfigReader& config, const EncoderSizeDefaults& defaults) {
  DecoderSpec spec;
  spec.model_type = config.string("model_type", std::nullopt);
  read_quantization(config, spec);
  spec.vocab_size = config.integer("vocab_size", defaults.vocab_size, 1, int64_t{1} << 22);
  spec.hidden_size = config.integer("hidden_size", 768, 1, int64_t{1} << 17);
  spec.num_layers = config.integer("num_hidden_layers", defaults.num_layers, 1, 1024);
  spec.num_heads = config.integer("num_attention_heads", 12, 1, 4096);
  if (spec.hidden_size % spec.num_heads != 0)
    config.reject("hidden_size", "must be divisible by num_attention_heads");
  spec.head_dim = spec.hidden_size / spec.num_heads;
  spec.intermediate_size = config.integer("intermediate_size", defaults.intermediate_size, 1, int64_t{1} << 20);
  spec.norm_eps = static_cast<float>(config.number(defaults.norm_eps_key, defaults.norm_eps));
  spec.activation = read_activation(config, defaults.activation_key, defaults.activation, spec.model_type);
  return spec;
}

void apply_encoder(DecoderSpec& spec, const std::string& prefix) {
  spec.output = ModelOutput::kHiddenStates;
  spec.causal = false;
  spec.base_model_prefix = prefix;
  spec.num_kv_heads = spec.num_heads;
  spec.names.lm_head = "";
}

void apply_post_norm_encoder(DecoderSpec& spec, const std::string& prefix) {
  apply_encoder(spec, prefix);
  spec.norm = layer_norm(spec.norm_eps);
  spec.gated_mlp = false;
  spec.rotary = false;
  spec.residual = Residual::kPostNorm;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = true;
  spec.sliding_window.assign(static_cast<size_t>(spec.num_layers), 0);
  spec.names.final_norm = "";
}

void apply_rotary_post_norm_encoder(const ConfigReader& config, DecoderSpec& spec, const std::string& prefix,
                                    double default_theta) {
  apply_post_norm_encoder(spec, prefix);
  spec.names.positions = "";
  spec.gated_mlp = true;
  spec.rotary = true;
  RopeDefaults rope;
  rope.theta = default_theta;
  rope.max_positions = spec.max_positions;
  spec.rope = read_rope_spec(config, spec.head_dim, rope);
  if (spec.rope.type != "default")
    reject_option(config, config.has("rope_parameters") ? "rope_parameters" : "rope_scaling",
                  "rope type '" + spec.rope.type + "'", spec.model_type, "supported: default");
}

void require_implemented(const ConfigReader& config, const std::string& key, const Json& implemented,
                         const std::string& model_class) {
  if (!config.has(key) || config.json().at(key).is_null() || config.json().at(key) == implemented) return;
  reject_option(config, key, ConfigReader::shown(config.json().at(key)), config.string("model_type", std::nullopt),
                "transformers' " + model_class + " implements only " + ConfigReader::shown(implemented));
}

}  // namespace canrun
