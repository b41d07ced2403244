// A family canrun lacks fails at load naming it and the supported ones; a supported family
// with a config option it cannot honour names that option.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include <filesystem>
#include <fstream>

#include "checkpoint/config_reader.h"
#include "models/registry.h"
#include "models/rope.h"
#include "runtime/session.h"
#include "util/json.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

class ArchitectureOptions : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("canrun_arch_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Loads a folder holding only this config.json: the spec is read before any weights.
  void expect_load_error(const Json& config, ErrorKind kind, std::initializer_list<std::string> fragments) {
    std::ofstream(dir_ / "config.json") << config.dump();
    try {
      Session(dir_.string(), uncompiled(Backend::kRef));
      FAIL() << "no error was thrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      for (const std::string& fragment : fragments)
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
            << "message '" << e.what() << "' lacks '" << fragment << "'";
    }
  }

  fs::path dir_;
};

Json tiny(const std::string& model_type) {
  return {{"model_type", model_type}, {"hidden_size", 64},       {"intermediate_size", 128},
          {"num_hidden_layers", 2},   {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"vocab_size", 300},        {"max_position_embeddings", 128}};
}

TEST_F(ArchitectureOptions, UnknownFamilyListsTheSupportedOnes) {
  expect_load_error(tiny("mamba"), ErrorKind::kUnsupportedArchitecture,
                    {"UNSUPPORTED_ARCHITECTURE: mamba", "supported:", "gemma2", "phi3", "qwen3_moe", "gpt_neox",
                     "deepseek_v2"});
}

TEST_F(ArchitectureOptions, UnknownRopeTypeIsNamed) {
  Json config = tiny("gemma2");
  config["rope_scaling"] = {{"rope_type", "frobnicated"}, {"factor", 2.0}};
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"rope_scaling", "rope_type", "'frobnicated'", "longrope"});
}

TEST_F(ArchitectureOptions, Phi3AcceptsOnlyDefaultAndLongrope) {
  Json config = tiny("phi3");
  config["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"rope_scaling", "linear", "phi3"});
}

TEST_F(ArchitectureOptions, UnknownQuantizationMethodIsNamed) {
  Json config = tiny("qwen3_moe");
  config["quantization_config"] = {{"quant_method", "exotic4"}, {"bits", 4}};
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"quantization_config", "quant_method 'exotic4'", "qwen3_moe"});
}

// The committed W4A16/W8A16 fixtures' quantization_config, with one option changed at a time.
TEST_F(ArchitectureOptions, CompressedTensorsOptionsCanrunCannotRunAreNamed) {
  const Json fixture = read_json_file(
      (fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/llama_w4a16/config.json").string(), ErrorKind::kIo);
  const auto expect_refused = [&](const std::string& pointer, const Json& value,
                                  std::initializer_list<std::string> fragments) {
    SCOPED_TRACE(pointer);
    Json config = fixture;
    config[Json::json_pointer("/quantization_config" + pointer)] = value;
    expect_load_error(config, ErrorKind::kUnsupportedOption, fragments);
  };
  const std::string weights = "/config_groups/group_0/weights";
  expect_refused(weights + "/symmetric", false, {"quantization_config", "weights.symmetric false", "llama"});
  expect_refused(weights + "/num_bits", 3, {"weights.num_bits 3", "int4 or int8"});
  expect_refused(weights + "/strategy", "tensor", {"weights.strategy 'tensor'"});
  expect_refused(weights + "/type", "float", {"weights.type 'float'"});
  expect_refused(weights + "/actorder", "group", {"weights.actorder \"group\"", "g_idx"});
  expect_refused("/config_groups/group_0/format", "int-quantized", {"format 'int-quantized'", "pack-quantized"});
  expect_refused("/config_groups/group_0/input_activations", {{"num_bits", 8}, {"type", "int"}},
                 {"input_activations (activation quantization)"});
  expect_refused("/kv_cache_scheme", {{"num_bits", 8}}, {"kv_cache_scheme"});
  Json two_groups = fixture;
  two_groups["quantization_config"]["config_groups"]["group_1"] =
      two_groups["quantization_config"]["config_groups"]["group_0"];
  std::ofstream(dir_ / "config.json") << two_groups.dump();
  try {
    Session(dir_.string(), uncompiled(Backend::kRef));
    FAIL() << "two config groups were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'config_groups': must hold one group"), std::string::npos)
        << e.what();
  }
}

TEST_F(ArchitectureOptions, GptqOptionsCanrunCannotRunAreNamed) {
  const Json fixture = read_json_file(
      (fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/llama_gptq_int4/config.json").string(), ErrorKind::kIo);
  const auto expect_refused = [&](const std::string& key, const Json& value,
                                  std::initializer_list<std::string> fragments) {
    SCOPED_TRACE(key);
    Json config = fixture;
    config["quantization_config"][key] = value;
    expect_load_error(config, ErrorKind::kUnsupportedOption, fragments);
  };
  expect_refused("sym", false, {"quantization_config", "sym false (zero points)", "llama"});
  expect_refused("desc_act", true, {"desc_act true (inputs permuted by g_idx)"});
  expect_refused("bits", 3, {"bits 3", "quant_method gptq, symmetric int4 or int8 without desc_act"});
  expect_refused("checkpoint_format", "marlin", {"checkpoint_format 'marlin'"});
  expect_refused("lm_head", true, {"lm_head true"});
  expect_refused("dynamic", {{"-:model.layers.0.*", Json::object()}}, {"dynamic (per-module overrides)"});
  Json no_groups = fixture;
  no_groups["quantization_config"]["group_size"] = 0;
  std::ofstream(dir_ / "config.json") << no_groups.dump();
  try {
    Session(dir_.string(), uncompiled(Backend::kRef));
    FAIL() << "group_size 0 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'group_size': must be -1"), std::string::npos) << e.what();
  }
}

TEST_F(ArchitectureOptions, GptOssReadsMxfp4ButNoOtherQuantization) {
  Json config = tiny("gpt_oss");
  config["quantization_config"] = {{"quant_method", "awq"}};
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"quantization_config", "quant_method 'awq'", "mxfp4"});
}

TEST_F(ArchitectureOptions, UnsupportedActivationIsNamed) {
  Json config = tiny("gemma2");
  config["hidden_activation"] = "mish";
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"hidden_activation", "mish", "gemma2"});
}

TEST_F(ArchitectureOptions, UnsupportedFamilyOptionIsNamed) {
  Json config = tiny("opt");
  config["layer_norm_elementwise_affine"] = false;
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"layer_norm_elementwise_affine", "opt"});
  Json olmoe = tiny("olmoe");
  olmoe["clip_qkv"] = 8.0;
  expect_load_error(olmoe, ErrorKind::kUnsupportedOption, {"clip_qkv", "olmoe"});
}

TEST_F(ArchitectureOptions, DeepseekV2RejectsWhatTransformersCannotRun) {
  Json config = tiny("deepseek_v2");
  config["num_experts_per_tok"] = 2;
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"num_key_value_heads", "2", "deepseek_v2"});
  config["num_key_value_heads"] = 4;
  config["topk_method"] = "noaux_tc";
  expect_load_error(config, ErrorKind::kUnsupportedOption,
                    {"topk_method", "'noaux_tc'", "deepseek_v2", "greedy, group_limited_greedy"});
  config["topk_method"] = "group_limited_greedy";
  expect_load_error(config, ErrorKind::kCheckpoint, {"n_group", "required"});
  config["topk_method"] = "greedy";
  config["moe_layer_freq"] = 2;
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"moe_layer_freq", "deepseek_v2", "supported: 1"});
}

TEST_F(ArchitectureOptions, NoauxRoutersNameTheirBadFields) {
  Json config = tiny("deepseek_v3");
  config["num_key_value_heads"] = 4;
  config["n_routed_experts"] = 6;
  config["num_experts_per_tok"] = 2;
  config["n_group"] = 4;
  expect_load_error(config, ErrorKind::kCheckpoint, {"config.json", "n_group", "must divide n_routed_experts (6)"});
  config["n_routed_experts"] = 8;
  config["topk_group"] = 1;
  config["num_experts_per_tok"] = 3;
  expect_load_error(config, ErrorKind::kCheckpoint, {"num_experts_per_tok", "topk_group"});
  Json glm = tiny("glm4_moe_lite");
  glm["num_key_value_heads"] = 4;
  glm["n_routed_experts"] = 8;
  glm["mlp_layer_types"] = {"dense", "mixed"};
  expect_load_error(glm, ErrorKind::kCheckpoint, {"mlp_layer_types", "entry 1", "\"dense\" or \"sparse\""});
  glm["mlp_layer_types"] = {"dense"};
  expect_load_error(glm, ErrorKind::kCheckpoint, {"mlp_layer_types", "each of the 2 layers"});
  // glm_moe_dsa: which layers share an earlier layer's indexer choice.
  Json dsa = tiny("glm_moe_dsa");
  dsa["num_key_value_heads"] = 4;
  dsa["n_routed_experts"] = 8;
  dsa["indexer_types"] = {"full", "partial"};
  expect_load_error(dsa, ErrorKind::kCheckpoint, {"indexer_types", "entry 1", "\"full\" or \"shared\""});
  dsa["indexer_types"] = {"shared", "full"};
  expect_load_error(dsa, ErrorKind::kCheckpoint, {"indexer_types", "layer 0 must run its own indexer"});
  dsa.erase("indexer_types");
  dsa["index_topk_pattern"] = "FX";
  expect_load_error(dsa, ErrorKind::kCheckpoint, {"index_topk_pattern", "entry 1", "F or S"});
  dsa["index_topk_pattern"] = "FSF";
  expect_load_error(dsa, ErrorKind::kCheckpoint, {"index_topk_pattern", "each of the 2 layers"});
  dsa["index_topk_pattern"] = "FS";
  EXPECT_EQ(find_architecture("glm_moe_dsa").read_spec(ConfigReader(dsa, "config.json")).mla.shared_index,
            (std::vector<bool>{false, true}));
  // Latent attention sizes its heads from qk_*_head_dim: GLM-4.7-Flash has 20 heads on 2048.
  glm.erase("mlp_layer_types");
  glm["hidden_size"] = 2048;
  glm["num_attention_heads"] = glm["num_key_value_heads"] = 20;
  EXPECT_EQ(find_architecture("glm4_moe_lite").read_spec(ConfigReader(glm, "config.json")).head_dim, 192 + 64);
}

TEST_F(ArchitectureOptions, HybridStacksNameTheirBadLayerLists) {
  Json qwen = tiny("qwen3_5_text");
  qwen["layer_types"] = {"linear_attention", "mamba"};
  expect_load_error(qwen, ErrorKind::kCheckpoint, {"config.json", "layer_types", "entry 1", "\"linear_attention\""});
  qwen["layer_types"] = {"full_attention"};
  expect_load_error(qwen, ErrorKind::kCheckpoint, {"layer_types", "each of the 2 layers"});
  qwen.erase("layer_types");
  qwen["linear_num_key_heads"] = 3;
  qwen["linear_num_value_heads"] = 4;
  expect_load_error(qwen, ErrorKind::kCheckpoint, {"linear_num_value_heads", "multiple of linear_num_key_heads (3)"});
  Json lfm2 = tiny("lfm2");
  lfm2["layer_types"] = {"conv", "ssm"};
  expect_load_error(lfm2, ErrorKind::kCheckpoint, {"layer_types", "entry 1", "\"conv\" or \"full_attention\""});
  lfm2.erase("layer_types");
  lfm2["full_attn_idxs"] = {0, 2};
  expect_load_error(lfm2, ErrorKind::kCheckpoint, {"full_attn_idxs", "layer indices below 2"});
}

TEST_F(ArchitectureOptions, Llama4LayerListsNameTheirBadEntries) {
  Json llama4 = tiny("llama4_text");
  llama4["no_rope_layers"] = {1, 0, 1};
  expect_load_error(llama4, ErrorKind::kCheckpoint, {"no_rope_layers", "each of the 2 layers"});
  llama4["no_rope_layers"] = {1, 2};
  expect_load_error(llama4, ErrorKind::kCheckpoint, {"no_rope_layers", "entry 1", "0 or 1"});
  llama4.erase("no_rope_layers");
  llama4["moe_layers"] = {0, 2};
  expect_load_error(llama4, ErrorKind::kCheckpoint, {"moe_layers", "layer indices below 2"});
  llama4.erase("moe_layers");
  llama4["layer_types"] = {"chunked_attention", "sliding_attention"};
  expect_load_error(llama4, ErrorKind::kCheckpoint, {"layer_types", "entry 1", "\"chunked_attention\""});
  // By default the rotated layers are the chunked ones, and the fourth of four has no rope.
  llama4.erase("layer_types");
  llama4["num_hidden_layers"] = 4;
  llama4["attention_chunk_size"] = 16;
  const DecoderSpec spec = find_architecture("llama4_text").read_spec(ConfigReader(llama4, "config.json"));
  EXPECT_EQ(spec.rope_layers, (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(spec.attention_chunk, (std::vector<int64_t>{16, 16, 16, 0}));
}

// GPT2Config's attribute_map: a config that spells gpt2-medium's sizes with the common names
// (hidden_size, ...) is read as transformers reads it, the common name winning over n_embd.
TEST_F(ArchitectureOptions, Gpt2TakesTheCommonNamesOfItsSizes) {
  const Json medium = {{"model_type", "gpt2"},        {"hidden_size", 1024},        {"num_hidden_layers", 24},
                       {"num_attention_heads", 16},   {"max_position_embeddings", 512}, {"n_embd", 768}};
  const DecoderSpec spec = find_architecture("gpt2").read_spec(ConfigReader(medium, "config.json"));
  EXPECT_EQ(spec.hidden_size, 1024);
  EXPECT_EQ(spec.num_layers, 24);
  EXPECT_EQ(spec.num_heads, 16);
  EXPECT_EQ(spec.head_dim, 64);
  EXPECT_EQ(spec.intermediate_size, 4096);
  EXPECT_EQ(spec.max_positions, 512);
  Json odd = medium;
  odd["num_attention_heads"] = 3;
  expect_load_error(odd, ErrorKind::kCheckpoint, {"field 'hidden_size': must be divisible by num_attention_heads"});
}

TEST_F(ArchitectureOptions, HunyuanAlphaStretchesTheBaseOrIsNamed) {
  // Hunyuan-7B's rope_scaling as published: "dynamic" with alpha 1000 over head_dim 16.
  Json hunyuan = tiny("hunyuan_v1_dense");
  hunyuan["rope_scaling"] = {{"type", "dynamic"}, {"alpha", 1000.0}, {"factor", 1.0}};
  const DecoderSpec spec = find_architecture("hunyuan_v1_dense").read_spec(ConfigReader(hunyuan, "config.json"));
  EXPECT_EQ(spec.rope.type, "default");
  EXPECT_DOUBLE_EQ(spec.rope.theta, 10000.0 * std::pow(1000.0, 16.0 / 14.0));
  EXPECT_TRUE(spec.qk_norm_after_rope);
  hunyuan["rope_scaling"]["alpha"] = -1.0;
  expect_load_error(hunyuan, ErrorKind::kCheckpoint, {"config.json", "alpha", "must be positive"});
}

TEST_F(ArchitectureOptions, Ernie45MoeLayersAndBadExpertCounts) {
  Json ernie = tiny("ernie4_5_moe");
  ernie["num_hidden_layers"] = 6;
  ernie["moe_num_experts"] = 4;
  ernie["moe_k"] = 2;
  ernie["moe_layer_start_index"] = 1;
  ernie["moe_layer_end_index"] = 4;
  ernie["moe_layer_interval"] = 2;
  const DecoderSpec spec = find_architecture("ernie4_5_moe").read_spec(ConfigReader(ernie, "config.json"));
  EXPECT_EQ(spec.moe_layers, (std::vector<bool>{false, true, false, true, false, false}));
  ernie["moe_k"] = 5;
  expect_load_error(ernie, ErrorKind::kCheckpoint, {"config.json", "moe_k", "must not exceed moe_num_experts (4)"});
}

TEST_F(ArchitectureOptions, MimoSlidingLayersDoubleTheKvHeads) {
  // By default layer 0 and every sixth are full attention, the rest slide with twice the kv heads.
  Json mimo = tiny("mimo_v2_flash");
  mimo["num_hidden_layers"] = 7;
  mimo["head_dim"] = 24;  // a partial rope of int(24 * 0.334) = 8 dims
  const DecoderSpec spec = find_architecture("mimo_v2_flash").read_spec(ConfigReader(mimo, "config.json"));
  EXPECT_EQ(spec.layer_kv_heads, (std::vector<int64_t>{2, 4, 4, 4, 4, 2, 4}));
  EXPECT_EQ(spec.sink_layers, (std::vector<bool>{false, true, true, true, true, false, true}));
  EXPECT_EQ(spec.moe_layers, (std::vector<bool>{false, true, true, true, true, true, true}));
  mimo["num_key_value_heads"] = 4;  // the sliding layers' 8 do not divide 4 query heads
  expect_load_error(mimo, ErrorKind::kCheckpoint, {"config.json", "num_key_value_heads", "twice as many"});
}

TEST_F(ArchitectureOptions, NemotronHPatternsNameTheirBadLetters) {
  Json nemotron = tiny("nemotron_h");
  nemotron["hybrid_override_pattern"] = "M*X-";
  expect_load_error(nemotron, ErrorKind::kCheckpoint,
                    {"config.json", "hybrid_override_pattern", "letter 'X' at layer 2", "M: Mamba-2"});
  nemotron["hybrid_override_pattern"] = "";
  expect_load_error(nemotron, ErrorKind::kCheckpoint, {"hybrid_override_pattern", "at least one layer"});
  nemotron.erase("hybrid_override_pattern");
  nemotron["layers_block_type"] = {"mamba", "ssm"};
  expect_load_error(nemotron, ErrorKind::kCheckpoint, {"layers_block_type", "entry 1", "\"linear_attention\""});
  nemotron["layers_block_type"] = {"linear_attention"};
  nemotron["mamba_num_heads"] = 6;
  nemotron["n_groups"] = 4;
  expect_load_error(nemotron, ErrorKind::kCheckpoint, {"n_groups", "divide mamba_num_heads (6)"});
  // The pattern decides the depth (transformers ignores num_hidden_layers beside it), and the
  // legacy names still read.
  nemotron.erase("layers_block_type");
  nemotron.erase("n_groups");
  nemotron.erase("mamba_num_heads");
  nemotron["hybrid_override_pattern"] = "M*-E";
  const DecoderSpec spec = find_architecture("nemotron_h").read_spec(ConfigReader(nemotron, "config.json"));
  EXPECT_EQ(spec.num_layers, 4);
  EXPECT_EQ(spec.mixer_kinds, (std::vector<std::string>{"mamba2", "attention", "none", "none"}));
  EXPECT_EQ(spec.ffn_kinds, (std::vector<std::string>{"none", "none", "dense_mlp", "routed_experts"}));
  nemotron.erase("hybrid_override_pattern");
  nemotron["layers_block_type"] = {"mamba", "attention"};
  EXPECT_EQ(find_architecture("nemotron_h").read_spec(ConfigReader(nemotron, "config.json")).mixer_kinds,
            (std::vector<std::string>{"mamba2", "attention"}));
}

TEST_F(ArchitectureOptions, DeepseekV4LayerListsAndRoutersAreReadOrNamed) {
  Json v4 = tiny("deepseek_v4");
  v4["num_key_value_heads"] = 1;
  v4["head_dim"] = 32;
  // The legacy per-layer ratios and hash layer count still read, as transformers folds them in.
  v4["compress_ratios"] = {0, 128};
  v4["num_hash_layers"] = 1;
  const DecoderSpec spec = find_architecture("deepseek_v4").read_spec(ConfigReader(v4, "config.json"));
  EXPECT_EQ(spec.compressed.rates, (std::vector<int64_t>{0, 128}));
  EXPECT_EQ(spec.compressed.indexed, (std::vector<bool>{false, false}));
  EXPECT_EQ(spec.moe.hash_layers, (std::vector<bool>{true, false}));
  EXPECT_EQ(spec.compressed.rope_dim, 4);  // 64 / 512 of the head
  EXPECT_EQ(spec.hyper.streams, 4);
  // The Hub's flat form: the main rotation a default one at rope_theta, the compressed one yarn at
  // compress_rope_theta with attention factor 1 (DeepseekV4Config.__post_init__).
  v4["rope_theta"] = 10000;
  v4["rope_scaling"] = {{"type", "yarn"}, {"factor", 16}, {"original_max_position_embeddings", 64},
                        {"beta_fast", 32}, {"beta_slow", 1}};
  // Longer layer lists are cut to the layers, and one shared MLP is built whatever
  // n_shared_experts says, as transformers does.
  v4["mlp_layer_types"] = {"hash_moe", "moe", "moe"};
  v4["n_shared_experts"] = 2;
  const DecoderSpec hub = find_architecture("deepseek_v4").read_spec(ConfigReader(v4, "config.json"));
  EXPECT_EQ(hub.rope.type, "default");
  EXPECT_DOUBLE_EQ(hub.rope.theta, 10000.0);
  EXPECT_EQ(hub.compressed.compress_rope.type, "yarn");
  EXPECT_DOUBLE_EQ(hub.compressed.compress_rope.theta, 160000.0);
  EXPECT_DOUBLE_EQ(hub.compressed.compress_rope.attention_factor, 1.0);
  EXPECT_EQ(hub.moe.hash_layers, (std::vector<bool>{true, false}));
  EXPECT_EQ(hub.moe.shared_ffn, hub.moe.expert_ffn);
  v4.erase("rope_scaling");
  v4.erase("mlp_layer_types");
  v4["quantization_config"] = {{"quant_method", "fp8"}, {"scale_fmt", "ue8m0"}};
  expect_load_error(v4, ErrorKind::kUnsupportedOption, {"config.json", "quantization_config", "quant_method 'fp8'"});
  v4.erase("quantization_config");
  v4["compress_ratios"] = {0, 16};
  expect_load_error(v4, ErrorKind::kCheckpoint, {"config.json", "compress_ratios", "entry 1", "0, 4 or 128"});
  v4.erase("compress_ratios");
  v4["layer_types"] = {"sliding_attention", "full_attention"};
  expect_load_error(v4, ErrorKind::kCheckpoint,
                    {"config.json", "layer_types", "entry 1", "compressed_sparse_attention"});
  v4["layer_types"] = {"sliding_attention", "heavily_compressed_attention"};
  v4["mlp_layer_types"] = {"moe", "dense"};
  expect_load_error(v4, ErrorKind::kCheckpoint, {"config.json", "mlp_layer_types", "entry 1", "\"hash_moe\""});
  v4.erase("mlp_layer_types");
  v4["num_key_value_heads"] = 2;
  expect_load_error(v4, ErrorKind::kCheckpoint, {"config.json", "num_key_value_heads"});
  v4["num_key_value_heads"] = 1;
  v4["scoring_func"] = "softmax";
  expect_load_error(v4, ErrorKind::kUnsupportedOption, {"config.json", "scoring_func", "sqrtsoftplus"});
  v4["scoring_func"] = "sigmoid";
  v4["o_groups"] = 3;
  expect_load_error(v4, ErrorKind::kCheckpoint, {"config.json", "o_groups", "must divide"});
}

TEST_F(ArchitectureOptions, FalconH1MultipliersAndMambaWidthAreReadOrNamed) {
  // transformers' defaults: mamba_d_ssm 1024 over 128 heads of 8, the norm off, an infinite
  // upper time step limit as it writes one.
  Json falcon = tiny("falcon_h1");
  falcon["key_multiplier"] = 0.5;
  falcon["ssm_multipliers"] = {0.9, 1.1, 1.2, 0.8, 1.3};
  falcon["time_step_limit"] = Json::array({0.0, Json{{"__float__", "Infinity"}}});
  const DecoderSpec spec = find_architecture("falcon_h1").read_spec(ConfigReader(falcon, "config.json"));
  EXPECT_EQ(spec.mamba.heads * spec.mamba.head_dim, 1024);
  EXPECT_FALSE(spec.mamba.gated_norm);
  EXPECT_TRUE(std::isinf(spec.mamba.dt_max));
  EXPECT_FLOAT_EQ(spec.attention_scale, 0.5f / 4.0f);  // key_multiplier / sqrt(head_dim 16)
  EXPECT_EQ(spec.mamba.zxbcdt_scales, (std::array<float, 5>{0.9f, 1.1f, 1.2f, 0.8f, 1.3f}));
  EXPECT_EQ(spec.mixer_kinds, (std::vector<std::string>{"mamba2_attention", "mamba2_attention"}));
  falcon["ssm_multipliers"] = {1.0, 1.0};
  expect_load_error(falcon, ErrorKind::kCheckpoint, {"config.json", "ssm_multipliers", "list of 5 numbers"});
  falcon.erase("ssm_multipliers");
  falcon["key_multiplier"] = 0.0;
  expect_load_error(falcon, ErrorKind::kCheckpoint, {"config.json", "key_multiplier", "must be positive"});
  falcon["key_multiplier"] = 1.0;
  falcon["mamba_d_ssm"] = 100;  // not 128 heads of a whole head dim
  expect_load_error(falcon, ErrorKind::kCheckpoint, {"config.json", "mamba_n_heads", "the Mamba width (100)"});
  falcon["mamba_d_ssm"] = 128;
  falcon["projectors_bias"] = true;
  expect_load_error(falcon, ErrorKind::kCheckpoint, {"config.json", "projectors_bias", "mamba_proj_bias"});
  falcon["projectors_bias"] = false;
  falcon["time_step_limit"] = {0.1, 0.01};
  expect_load_error(falcon, ErrorKind::kCheckpoint, {"config.json", "time_step_limit", "lower <= upper"});
}

TEST_F(ArchitectureOptions, Gemma4LayerShapesAndOptionsAreReadOrNamed) {
  // The Hub's form: the full layers' heads from global_head_dim and, with attention_k_eq_v,
  // num_global_key_value_heads; proportional rope rotates int(0.25 * 64 // 2) = 8 of 32 pairs.
  Json gemma = tiny("gemma4_text");
  gemma["head_dim"] = 16;
  gemma["hidden_size_per_layer_input"] = 0;
  gemma["layer_types"] = {"sliding_attention", "full_attention"};
  gemma["global_head_dim"] = 64;
  gemma["num_global_key_value_heads"] = 1;
  gemma["attention_k_eq_v"] = true;
  const auto read = [](const Json& config) {
    return find_architecture("gemma4_text").read_spec(ConfigReader(config, "config.json"));
  };
  DecoderSpec spec = read(gemma);
  EXPECT_EQ(spec.layer_head_dims, (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(spec.layer_kv_heads, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(spec.keys_as_values, (std::vector<bool>{false, true}));
  EXPECT_EQ(spec.rope.rotary_dim, 64);
  EXPECT_EQ(spec.rope.rotated_pairs, 8);
  EXPECT_EQ(rope_inverse_frequencies(spec.rope)[8], 0.0f);
  EXPECT_GT(rope_inverse_frequencies(spec.rope)[7], 0.0f);
  EXPECT_EQ(spec.local_rope.rotary_dim, 16);
  gemma["attention_k_eq_v"] = false;  // the global kv heads apply with keys as values only
  EXPECT_EQ(read(gemma).layer_kv_heads, (std::vector<int64_t>{2, 2}));
  // transformers' own form, per_layer_config, rules over global_head_dim.
  gemma["per_layer_config"] = {{"1", {{"head_dim", 32}, {"num_key_value_heads", 4}}}};
  spec = read(gemma);
  EXPECT_EQ(spec.layer_head_dims, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(spec.layer_kv_heads, (std::vector<int64_t>{2, 4}));

  gemma["per_layer_config"] = {{"layer1", {{"head_dim", 32}}}};
  expect_load_error(gemma, ErrorKind::kCheckpoint, {"config.json: per_layer_config", "layer1", "layer index"});
  gemma["per_layer_config"] = {{"1", {{"intermediate_size", 32}}}};
  expect_load_error(gemma, ErrorKind::kCheckpoint, {"per_layer_config: 1", "intermediate_size"});
  gemma["per_layer_config"] = {{"0", {{"head_dim", 32}}}};
  expect_load_error(gemma, ErrorKind::kCheckpoint, {"per_layer_config", "layer 0 has head_dim 32"});
  gemma.erase("per_layer_config");
  gemma["num_global_key_value_heads"] = 3;
  gemma["attention_k_eq_v"] = true;
  expect_load_error(gemma, ErrorKind::kCheckpoint, {"num_key_value_heads", "layer 1 has 3"});
  gemma["num_global_key_value_heads"] = 1;
  gemma.erase("hidden_size_per_layer_input");  // transformers' defaults: 256 wide, 262144 tokens
  EXPECT_EQ(read(gemma).per_layer_input_dim, 256);
  EXPECT_EQ(read(gemma).per_layer_vocab, 262144);
  gemma["hidden_size_per_layer_input"] = nullptr;  // none
  EXPECT_EQ(read(gemma).per_layer_input_dim, 0);
  // The last shared layers attend to the last earlier layer of their type; double-wide MLPs.
  gemma["num_hidden_layers"] = 4;
  gemma["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  gemma["num_kv_shared_layers"] = 2;
  gemma["use_double_wide_mlp"] = true;
  spec = read(gemma);
  EXPECT_EQ(spec.kv_source_layers, (std::vector<int64_t>{-1, -1, 0, 1}));
  EXPECT_EQ(spec.layer_ffn, (std::vector<int64_t>{128, 128, 256, 256}));
  gemma["num_kv_shared_layers"] = 3;  // layer 1, full, would have no earlier full layer to read
  expect_load_error(gemma, ErrorKind::kCheckpoint, {"num_kv_shared_layers", "layer 1", "full layer"});
  gemma["num_kv_shared_layers"] = 0;
  gemma["use_bidirectional_attention"] = "all";
  expect_load_error(gemma, ErrorKind::kUnsupportedOption, {"use_bidirectional_attention", "all", "causal"});
  gemma["use_bidirectional_attention"] = "vision";
  gemma["enable_moe_block"] = true;
  expect_load_error(gemma, ErrorKind::kCheckpoint, {"config.json", "num_experts"});
}

// A model_type transformers does not know loads as the class its "architectures" names.
TEST(ArchitectureRegistry, ArchitecturesNameTheFamilyOfAnUnknownModelType) {
  EXPECT_EQ(resolve_architecture("kimi_k2", {"DeepseekV3ForCausalLM"})->model_type, "deepseek_v3");
  EXPECT_EQ(resolve_architecture("qwen3", {"DeepseekV3ForCausalLM"})->model_type, "qwen3");  // model_type first
  EXPECT_EQ(resolve_architecture("kimi_k2", {}), nullptr);
  EXPECT_EQ(resolve_architecture("kimi_k2", {"KimiK2ForCausalLM"}), nullptr);
  Json config = tiny("kimi_k2");
  EXPECT_THROW(architecture_of(ConfigReader(config, "config.json")), Error);
  config["architectures"] = "DeepseekV3ForCausalLM";
  try {
    architecture_of(ConfigReader(config, "config.json"));
    FAIL() << "a string in place of the list was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'architectures'"), std::string::npos) << e.what();
  }
  config["architectures"] = {"DeepseekV3ForCausalLM"};
  EXPECT_EQ(architecture_of(ConfigReader(config, "config.json")).model_type, "deepseek_v3");
}

TEST_F(ArchitectureOptions, LongropeFactorsMustMatchTheRotaryDimension) {
  Json config = tiny("phi3");
  config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 1.0}}, {"long_factor", {1.0, 1.0}}};
  expect_load_error(config, ErrorKind::kCheckpoint, {"short_factor", "expected rotary dimension / 2 = 8"});
}

// Llama 4 Scout publishes equal factors (no smoothed band; tests/fixtures/models/llama4_scout_rope
// runs them token-exact); a high factor below the low one is a mistake that is named.
TEST_F(ArchitectureOptions, Llama3RopeTakesEqualFrequencyFactorsAndNamesReversedOnes) {
  Json config = tiny("llama");
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 16.0}, {"low_freq_factor", 1.0},
                            {"high_freq_factor", 1.0}, {"original_max_position_embeddings", 64}};
  const RopeSpec rope = find_architecture("llama").read_spec(ConfigReader(config, "config.json")).rope;
  const std::vector<float> scaled = rope_inverse_frequencies(rope);
  config.erase("rope_scaling");
  const std::vector<float> plain =
      rope_inverse_frequencies(find_architecture("llama").read_spec(ConfigReader(config, "config.json")).rope);
  ASSERT_EQ(scaled.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    const bool long_wave = 2 * std::numbers::pi / plain[i] > 64.0;
    EXPECT_FLOAT_EQ(scaled[i], long_wave ? plain[i] / 16 : plain[i]) << "frequency " << i;
  }
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 16.0}, {"low_freq_factor", 4.0},
                            {"high_freq_factor", 1.0}, {"original_max_position_embeddings", 64}};
  expect_load_error(config, ErrorKind::kCheckpoint,
                    {"rope_scaling", "high_freq_factor", "must not be less than low_freq_factor"});
}

std::vector<int64_t> windows_of(const std::string& model_type, const Json& config) {
  return find_architecture(model_type).read_spec(ConfigReader(config, "config.json")).sliding_window;
}

// transformers reads "sliding_window": null as full attention on every layer, and an absent
// field as the family's default window on its sliding layers.
TEST(ArchitectureRegistry, SlidingWindowNullMeansFullAttentionAbsentMeansTheDefault) {
  struct Case {
    std::string model_type;
    int64_t fallback;
    int64_t layers;  // the last one is a global layer, the others slide
  };
  for (const Case& c : {Case{"gemma2", 4096, 2}, Case{"gemma3_text", 4096, 6}, Case{"gpt_oss", 128, 2}}) {
    const auto expected = [&](int64_t window) {
      std::vector<int64_t> windows(static_cast<size_t>(c.layers), window);
      windows.back() = 0;
      return windows;
    };
    Json config = tiny(c.model_type);
    config["num_hidden_layers"] = c.layers;
    EXPECT_EQ(windows_of(c.model_type, config), expected(c.fallback)) << c.model_type;
    config["sliding_window"] = nullptr;
    EXPECT_EQ(windows_of(c.model_type, config), expected(0)) << c.model_type;
    config["sliding_window"] = 16;
    EXPECT_EQ(windows_of(c.model_type, config), expected(16)) << c.model_type;
  }
  Json mixtral = tiny("mixtral");
  mixtral["num_local_experts"] = 4;
  mixtral["num_experts_per_tok"] = 2;
  EXPECT_EQ(windows_of("mixtral", mixtral), (std::vector<int64_t>{0, 0}));
  mixtral["sliding_window"] = 16;
  EXPECT_EQ(windows_of("mixtral", mixtral), (std::vector<int64_t>{16, 16}));
}

// EmbeddingGemma's config: gemma3_text made an encoder, each sliding window halved to run both
// ways as transformers' config halves it; gemma2 runs causally only and says so.
TEST_F(ArchitectureOptions, BidirectionalGemma3IsAnEncoderGemma2RefusesTheFlag) {
  Json config = tiny("gemma3_text");
  config["num_hidden_layers"] = 2;
  config["sliding_window"] = 512;
  config["use_bidirectional_attention"] = true;
  config["layer_types"] = {"sliding_attention", "full_attention"};
  const DecoderSpec spec = find_architecture("gemma3_text").read_spec(ConfigReader(config, "config.json"));
  EXPECT_EQ(spec.output, ModelOutput::kHiddenStates);
  EXPECT_FALSE(spec.causal);
  EXPECT_EQ(spec.sliding_window, (std::vector<int64_t>{257, 0}));
  Json gemma2 = tiny("gemma2");
  gemma2["use_bidirectional_attention"] = true;
  expect_load_error(gemma2, ErrorKind::kUnsupportedOption, {"use_bidirectional_attention", "gemma2", "causal only"});
}

// A ModernBERT config as the Hub holds them (answerdotai/ModernBERT-base's fields): a global
// layer every global_attn_every_n_layers from the first, the local ones |q - k| <= 64, each kind
// with its own theta; norm_eps, not the layer_norm_eps beside it. What it cannot run is named.
TEST_F(ArchitectureOptions, ModernBertReadsItsOwnNamesOrNamesWhatItCannotRun) {
  Json config = {{"model_type", "modernbert"},
                 {"hidden_size", 64},
                 {"intermediate_size", 96},
                 {"num_hidden_layers", 5},
                 {"num_attention_heads", 4},
                 {"vocab_size", 300},
                 {"global_attn_every_n_layers", 3},
                 {"local_attention", 128},
                 {"global_rope_theta", 160000.0},
                 {"local_rope_theta", 10000.0},
                 {"norm_eps", 1e-5},
                 {"layer_norm_eps", 1e-12},
                 {"norm_bias", false},
                 {"hidden_activation", "gelu"},
                 {"position_embedding_type", "absolute"}};
  const auto read = [](const Json& c) {
    return find_architecture("modernbert").read_spec(ConfigReader(c, "config.json"));
  };
  const DecoderSpec spec = read(config);
  EXPECT_EQ(spec.output, ModelOutput::kHiddenStates);
  EXPECT_FALSE(spec.causal);
  EXPECT_EQ(spec.sliding_window, (std::vector<int64_t>{0, 65, 65, 0, 65}));
  EXPECT_EQ(spec.attn_norm_layers, (std::vector<bool>{false, true, true, true, true}));
  EXPECT_TRUE(spec.use_local_rope);
  EXPECT_DOUBLE_EQ(spec.rope.theta, 160000.0);
  EXPECT_DOUBLE_EQ(spec.local_rope.theta, 10000.0);
  EXPECT_FLOAT_EQ(spec.norm.eps, 1e-5f);
  EXPECT_FALSE(spec.norm.bias);
  EXPECT_EQ(spec.fused_qkv, FusedQkv::kConcat);
  EXPECT_TRUE(spec.fused_gate_up);
  EXPECT_FALSE(spec.qkv_bias || spec.o_bias || spec.mlp_bias);
  Json scaled = config;  // an older config's rope_scaling rotates both kinds of layer
  scaled["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  const DecoderSpec both = read(scaled);
  EXPECT_EQ(both.rope.type, "linear");
  EXPECT_EQ(both.local_rope.type, "linear");
  EXPECT_DOUBLE_EQ(both.local_rope.theta, 10000.0);
  Json typed = config;
  typed["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention", "local"};
  expect_load_error(typed, ErrorKind::kCheckpoint, {"layer_types", "entry 4"});
  Json wide = config;
  wide["head_dim"] = 32;
  expect_load_error(wide, ErrorKind::kCheckpoint, {"head_dim", "hidden_size / num_attention_heads (16)"});
  Json flat = config;
  flat["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}};
  expect_load_error(flat, ErrorKind::kCheckpoint, {"rope_parameters", "keyed by layer type"});
  Json act = config;
  act["hidden_activation"] = "mish";
  expect_load_error(act, ErrorKind::kUnsupportedOption, {"hidden_activation", "'mish'", "modernbert"});
}

TEST(ArchitectureRegistry, EveryFamilyListsItsOptionsAndClasses) {
  for (const Architecture& architecture : registered_architectures()) {
    EXPECT_FALSE(architecture.description.empty()) << architecture.model_type;
    EXPECT_FALSE(architecture.options.empty()) << architecture.model_type;
    EXPECT_FALSE(architecture.classes.empty()) << architecture.model_type;
  }
}

}  // namespace
}  // namespace canrun
