// A family canrun lacks fails at load naming it and the supported ones; a supported family
// with a config option it cannot honour names that option.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/config_reader.h"
#include "models/registry.h"
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

TEST_F(ArchitectureOptions, GptOssReadsMxfp4ButNoOtherQuantization) {
  Json config = tiny("gpt_oss");
  config["quantization_config"] = {{"quant_method", "awq"}};
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"quantization_config", "quant_method 'awq'", "mxfp4"});
}

TEST_F(ArchitectureOptions, UnsupportedActivationIsNamed) {
  Json config = tiny("gemma2");
  config["hidden_activation"] = "quick_gelu";
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"hidden_activation", "quick_gelu", "gemma2"});
}

TEST_F(ArchitectureOptions, UnsupportedFamilyOptionIsNamed) {
  Json config = tiny("opt");
  config["do_layer_norm_before"] = false;
  expect_load_error(config, ErrorKind::kUnsupportedOption, {"do_layer_norm_before", "opt"});
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

TEST_F(ArchitectureOptions, LongropeFactorsMustMatchTheRotaryDimension) {
  Json config = tiny("phi3");
  config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 1.0}}, {"long_factor", {1.0, 1.0}}};
  expect_load_error(config, ErrorKind::kCheckpoint, {"short_factor", "expected rotary dimension / 2 = 8"});
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

TEST(ArchitectureRegistry, EveryFamilyListsItsOptions) {
  for (const Architecture& architecture : registered_architectures()) {
    EXPECT_FALSE(architecture.description.empty()) << architecture.model_type;
    EXPECT_FALSE(architecture.options.empty()) << architecture.model_type;
  }
}

}  // namespace
}  // namespace canrun
