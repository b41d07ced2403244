// Image-text-to-text parity with transformers on the committed tiny vision-language checkpoints
// (Qwen3-VL, Qwen3.5, Qwen3.5-MoE), on each backend. The goldens (tests/goldens/multimodal/NAME.json,
// made by tools/make_multimodal_fixtures.py with the transformers and torch versions they record) hold,
// per prompt, the processor's expanded prompt ids, the vision tower's features, the M-RoPE
// positions, 32 greedy tokens and the logits after the prompt; the images are the committed
// test images, preprocessed here by canrun's own processor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/session.h"
#include "util/error.h"
#include "util/json.h"
#include "vision/image_loading.h"
#include "vision/image_processor.h"
#include "vision/multimodal_prompt.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kSourceDir = CANRUN_SOURCE_DIR;
const fs::path kGoldens = kSourceDir / "tests/goldens/multimodal";

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kGoldens))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

PixelValues pixels_of(const fs::path& model, const Json& c) {
  std::vector<RgbImage> images;
  for (const Json& file : c["images"])
    images.push_back(load_image((kSourceDir / "tests/fixtures/images" / file.get<std::string>()).string()));
  return preprocess_images(read_image_processor_config(model.string()), images);
}

float max_magnitude(const std::vector<float>& values) {
  float largest = 0;
  for (float v : values) largest = std::max(largest, std::abs(v));
  return largest;
}

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

enum class Engine { kRef, kCpu, kCpuCompiled };

SessionOptions options_for(Engine engine) {
  SessionOptions options = uncompiled(engine == Engine::kRef ? Backend::kRef : Backend::kCpu);
  if (engine == Engine::kCpuCompiled) {
    options.compile = CompileOptions{};
    options.compile->use_cache = false;
    options.compile->buckets = {16, 64, 128};
  }
  return options;
}

std::string engine_name(Engine engine) {
  return engine == Engine::kRef ? "ref" : engine == Engine::kCpu ? "cpu" : "cpu_compiled";
}

class MultimodalParity : public testing::TestWithParam<std::tuple<Engine, std::string>> {};

TEST_P(MultimodalParity, ImagesAndTextGiveTransformersTokensAndLogits) {
  const auto& [engine, name] = GetParam();
  const Json g = read_json_file((kGoldens / (name + ".json")).string(), ErrorKind::kIo);
  const fs::path model = kSourceDir / "tests/fixtures/models" / name;
  Session session(model.string(), options_for(engine));
  ASSERT_TRUE(session.takes_images());
  // Logits: the golden parity test's tolerances. Features (up to ~30 here) are compared relative
  // to the largest: f32 sums in another order than torch's move them by ~3e-6 of it.
  const float tolerance = engine == Engine::kRef ? 1e-4f : 2e-4f;
  int image_cases = 0, exact = 0;
  float worst_logits = 0, worst_features = 0;  // features: relative to the largest
  for (const Json& c : g["cases"]) {
    SCOPED_TRACE(c["rendered"].get<std::string>());
    const std::vector<int32_t> prompt = c["prompt_ids"].get<std::vector<int32_t>>();
    GenerateRequest request;
    request.max_new_tokens = 32;
    if (!c["images"].empty()) {
      ++image_cases;
      const PixelValues pixels = pixels_of(model, c);
      EXPECT_EQ(Json(pixels.grid_thw), c["image_grid_thw"]);
      const std::shared_ptr<const VisualInputs> visual = session.encode_images(prompt, pixels);
      const auto relative = [](const std::vector<float>& actual, const std::vector<float>& expected) {
        return max_difference(actual, expected) / std::max(1.0f, max_magnitude(expected));
      };
      worst_features = std::max(worst_features, relative(visual->embeds, c["image_embeds"].get<std::vector<float>>()));
      ASSERT_EQ(visual->deepstack.size(), c["deepstack_embeds"].size());
      for (size_t i = 0; i < visual->deepstack.size(); ++i)
        worst_features = std::max(worst_features,
                                  relative(visual->deepstack[i], c["deepstack_embeds"][i].get<std::vector<float>>()));
      const Json positions = c["position_ids"];
      for (size_t p = 0; p < prompt.size(); ++p)
        for (size_t axis = 0; axis < 3; ++axis)
          ASSERT_EQ(visual->rope_positions[p][axis], positions[axis][p].get<int64_t>()) << "position " << p;
      EXPECT_EQ(visual->rope_delta, c["rope_delta"].get<int64_t>());
      request.visual = visual;
    }
    const GenerationResult result = session.generate(prompt, request);
    EXPECT_EQ(result.tokens, c["generated_ids"].get<std::vector<int32_t>>());
    exact += result.tokens == c["generated_ids"].get<std::vector<int32_t>>();
    worst_logits =
        std::max(worst_logits, max_difference(result.prompt_logits, c["last_logits"].get<std::vector<float>>()));
  }
  EXPECT_GE(image_cases, 2);
  EXPECT_LT(worst_features, 2e-5f);
  EXPECT_LT(worst_logits, tolerance);
  // What was measured, for reports: --gtest_output=json keeps it.
  RecordProperty("exact_prompts", std::to_string(exact) + "/" + std::to_string(g["cases"].size()));
  RecordProperty("max_feature_diff_relative", std::to_string(worst_features));
  RecordProperty("max_logit_diff", std::to_string(worst_logits));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MultimodalParity,
                         testing::Combine(testing::Values(Engine::kRef, Engine::kCpu, Engine::kCpuCompiled),
                                          testing::ValuesIn(fixture_names())),
                         [](const testing::TestParamInfo<std::tuple<Engine, std::string>>& info) {
                           return std::get<1>(info.param) + "_" + engine_name(std::get<0>(info.param));
                         });

TEST(MultimodalPrompt, EachPlaceholderTakesItsImagesTokens) {
  EXPECT_EQ(expand_image_placeholders(std::vector<int32_t>{1, 9, 2, 9, 3}, 9, {2, 3}),
            (std::vector<int32_t>{1, 9, 9, 2, 9, 9, 9, 3}));
  EXPECT_EQ(image_token_counts({{1, 6, 4}, {1, 2, 2}}, 2), (std::vector<int64_t>{6, 1}));
}

TEST(MultimodalPrompt, PlaceholdersAndImagesMustAgree) {
  try {
    expand_image_placeholders(std::vector<int32_t>{1, 9, 2}, 9, {4, 4});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("1 image placeholder and there are 2 images"), std::string::npos) << e.what();
  }
  EXPECT_THROW(expand_image_placeholders(std::vector<int32_t>{1, 2}, 9, {4}), Error);
}

TEST(MultimodalPrompt, ImageTokensMustMatchTheGrid) {
  VisionFeatures features;
  features.tokens = 2;
  // One image of 2x4 patches merged 2x2 takes 2 tokens; the prompt holds 3.
  EXPECT_THROW(qwen_visual_inputs(std::vector<int32_t>{5, 9, 9, 9, 6}, 9, {{1, 2, 4}}, 2, features), Error);
}

TEST(MultimodalPrompt, TextModelsTakeNoImages) {
  Session session((kSourceDir / "tests/fixtures/models/qwen3").string(), uncompiled(Backend::kRef));
  EXPECT_FALSE(session.takes_images());
  EXPECT_THROW(session.encode_images(std::vector<int32_t>{1, 2}, PixelValues{}), Error);
}

}  // namespace
}  // namespace canrun
