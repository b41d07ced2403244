// How nomic_bert and gte (gte's "new" as the Hub names it) read a config: the Hub's original
// keys where transformers' are absent, and a one-line refusal of an original switch transformers
// does not implement, naming config.json and the field.
#include <gtest/gtest.h>

#include <string>

#include "checkpoint/config_reader.h"
#include "models/registry.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

DecoderSpec read(const Json& config) {
  return find_architecture(config["model_type"].get<std::string>()).read_spec(ConfigReader(config, "config.json"));
}

void expect_refused(const Json& config, std::initializer_list<std::string> fragments) {
  try {
    read(config);
    FAIL() << "no error was thrown";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos) << "message '" << message << "' lacks '" << fragment << "'";
  }
}

// nomic-embed-text-v1.5's config.json as the Hub stores it (the original remote code's keys).
Json nomic_original() {
  return {{"model_type", "nomic_bert"}, {"n_embd", 64},  {"n_layer", 2},
          {"n_head", 4},               {"n_inner", 96}, {"vocab_size", 300},
          {"n_positions", 8192},       {"rotary_emb_base", 1000}, {"rotary_emb_fraction", 1.0},
          {"rotary_emb_interleaved", false}, {"rotary_scaling_factor", nullptr}, {"prenorm", false},
          {"qkv_proj_bias", false},    {"mlp_fc1_bias", false}, {"mlp_fc2_bias", false},
          {"activation_function", "swiglu"}, {"layer_norm_epsilon", 1e-12}, {"type_vocab_size", 2}};
}

TEST(RotaryEncoderConfig, NomicBertReadsTheOriginalSizesAndItsRotaryLayout) {
  const DecoderSpec spec = read(nomic_original());
  EXPECT_EQ(spec.hidden_size, 64);
  EXPECT_EQ(spec.num_layers, 2);
  EXPECT_EQ(spec.num_heads, 4);
  EXPECT_EQ(spec.head_dim, 16);
  EXPECT_EQ(spec.intermediate_size, 96);
  EXPECT_EQ(spec.output, ModelOutput::kHiddenStates);
  EXPECT_FALSE(spec.causal);
  EXPECT_TRUE(spec.rotary && spec.gated_mlp);
  EXPECT_EQ(spec.rope.theta, 1000.0);  // transformers' default; rotary_emb_base is not read
  EXPECT_EQ(spec.rope.rotary_dim, 16);
  EXPECT_EQ(spec.activation, Activation::kSilu);
  EXPECT_EQ(spec.residual, Residual::kPostNorm);
  EXPECT_FALSE(spec.qkv_bias || spec.o_bias || spec.mlp_bias);
  EXPECT_EQ(spec.names.qkv, "attn.Wqkv");
  // transformers' own keys come first.
  Json native = nomic_original();
  native["hidden_size"] = 32;
  native["rope_theta"] = 500.0;
  EXPECT_EQ(read(native).hidden_size, 32);
  EXPECT_EQ(read(native).rope.theta, 500.0);
}

TEST(RotaryEncoderConfig, NomicBertRefusesTheSwitchesTransformersLacks) {
  for (const auto& [key, value] : {std::pair<std::string, Json>{"rotary_emb_fraction", 0.5},
                                   {"rotary_emb_interleaved", true}, {"prenorm", true}, {"qkv_proj_bias", true},
                                   {"mlp_fc1_bias", true}, {"activation_function", "gelu"}}) {
    Json config = nomic_original();
    config[key] = value;
    expect_refused(config, {"config.json", "'" + key + "'", "nomic_bert", "NomicBertModel"});
  }
}

Json gte_original(const std::string& model_type) {
  return {{"model_type", model_type}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
          {"intermediate_size", 96}, {"vocab_size", 300}, {"max_position_embeddings", 8192},
          {"type_vocab_size", 1}, {"hidden_act", "gelu"}, {"layer_norm_eps", 1e-12},
          {"position_embedding_type", "rope"}, {"rope_theta", 20000}, {"layer_norm_type", "layer_norm"},
          {"pack_qkv", true}, {"unpad_inputs", false}, {"use_memory_efficient_attention", false},
          {"logn_attention_scale", false}, {"logn_attention_clip1", false}};
}

TEST(RotaryEncoderConfig, GteReadsTheHubsNewConfigAsTransformersReadsGte) {
  for (const std::string model_type : {"new", "gte"}) {
    const DecoderSpec spec = read(gte_original(model_type));
    EXPECT_EQ(spec.rope.theta, 20000.0);
    EXPECT_EQ(spec.activation, Activation::kGelu);
    EXPECT_TRUE(spec.fused_gate_up && spec.fused_up_first && spec.qkv_bias && spec.o_bias && !spec.mlp_bias && spec.down_bias);
    EXPECT_EQ(spec.names.gate_up, "mlp.up_gate_proj");
    EXPECT_EQ(spec.names.token_types, "embeddings.token_type_embeddings");
    EXPECT_EQ(spec.base_model_prefix, "new.");
  }
  Json no_types = gte_original("new");
  no_types["type_vocab_size"] = 0;
  EXPECT_EQ(read(no_types).names.token_types, "");
}

TEST(RotaryEncoderConfig, GteRefusesNtkScalingAndTheSwitchesTransformersLacks) {
  Json ntk = gte_original("new");
  ntk["rope_scaling"] = {{"type", "ntk"}, {"factor", 8.0}};
  expect_refused(ntk, {"config.json", "rope_scaling", "ntk"});
  for (const auto& [key, value] : {std::pair<std::string, Json>{"position_embedding_type", "absolute"},
                                   {"layer_norm_type", "rms_norm"}, {"pack_qkv", false},
                                   {"logn_attention_scale", true}}) {
    Json config = gte_original("new");
    config[key] = value;
    expect_refused(config, {"config.json", "'" + key + "'", "GteModel"});
  }
}

}  // namespace
}  // namespace canrun
