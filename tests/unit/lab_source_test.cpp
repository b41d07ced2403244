// Where a check's weights come from: the Hugging Face cache layout (a fake cache pointing at
// a tiny fixture), and synthetic checkpoints (deterministic, loadable); then a whole check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/safetensors.h"
#include "lab/check.h"
#include "hub/hf_cache.h"
#include "lab/model_source.h"
#include "lab/synthetic_weights.h"
#include "runtime/session.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models";

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "canrun-lab-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const std::string kCommitA = "0123abcd0123abcd0123abcd0123abcd0123abcd";
const std::string kCommitB = std::string(40, 'd');
const std::string kCommitC = "feedface" + std::string(32, '0');

// models--org--name/refs/main -> snapshots/<revision>/ holding a copy of a fixture.
void make_cached_model(const fs::path& cache, const std::string& folder, const std::string& revision) {
  const fs::path repo = cache / folder;
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << revision << "\n";
  fs::create_directories(repo / "snapshots");
  fs::copy(kFixtures / "qwen2", repo / "snapshots" / revision, fs::copy_options::recursive);
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(LabHfCache, FindsTheSnapshotRefsMainNames) {
  TempDir cache;
  make_cached_model(cache.path(), "models--tiny-org--tiny-qwen2", kCommitA);
  const auto found = find_cached_snapshot(cache.path().string(), "tiny-org/tiny-qwen2");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->revision, kCommitA);
  EXPECT_EQ(fs::path(found->dir), cache.path() / "models--tiny-org--tiny-qwen2/snapshots" / kCommitA);
  EXPECT_FALSE(find_cached_snapshot(cache.path().string(), "tiny-org/other").has_value());
}

TEST(LabHfCache, FindsATagsSnapshotOrACommitsOwn) {
  TempDir cache;
  const std::string commit(40, 'a');
  make_cached_model(cache.path(), "models--tiny-org--tiny-qwen2", commit);
  fs::create_directories(cache.path() / "models--tiny-org--tiny-qwen2/refs/refs/pr");
  std::ofstream(cache.path() / "models--tiny-org--tiny-qwen2/refs/refs/pr/1") << commit;
  const std::string dir = cache.path().string();
  EXPECT_EQ(find_snapshot(dir, "tiny-org/tiny-qwen2", "refs/pr/1")->revision, commit);
  EXPECT_EQ(find_snapshot(dir, "tiny-org/tiny-qwen2", commit)->revision, commit);
  EXPECT_FALSE(find_snapshot(dir, "tiny-org/tiny-qwen2", "v2").has_value());
  EXPECT_FALSE(find_snapshot(dir, "tiny-org/tiny-qwen2", std::string(40, 'b')).has_value());
  EXPECT_EQ(hf_repo_folder_name("org/name"), "models--org--name");
}

TEST(LabHfCache, RefToAMissingSnapshotIsAnError) {
  TempDir cache;
  fs::create_directories(cache.path() / "models--a--b/refs");
  std::ofstream(cache.path() / "models--a--b/refs/main") << kCommitB;
  try {
    find_cached_snapshot(cache.path().string(), "a/b");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("snapshots/" + kCommitB), std::string::npos) << e.what();
  }
}

TEST(LabHfCache, ARefHoldingAPathIsRefusedNotFollowed) {
  TempDir cache;
  fs::create_directories(cache.path() / "models--a--b/refs");
  fs::create_directories(cache.path() / "models--a--b/snapshots");
  std::ofstream(cache.path() / "models--a--b/refs/main") << "../../../../etc";
  try {
    find_cached_snapshot(cache.path().string(), "a/b");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refs/main: holds '../../../../etc', expected a commit hash"),
              std::string::npos)
        << e.what();
  }
}

TEST(LabHfCache, CacheFolderFollowsHuggingFaceHubOrder) {
  const ScopedEnv home("HOME", "/home/someone");
  const ScopedEnv hf_home("HF_HOME", "/data/hf");
  {
    const ScopedEnv hub("HF_HUB_CACHE", "/fast/hub");
    EXPECT_EQ(hf_hub_cache_dir(), "/fast/hub");
  }
  const ScopedEnv no_hub("HF_HUB_CACHE", "");
  EXPECT_EQ(hf_hub_cache_dir(), "/data/hf/hub");
  const ScopedEnv no_home("HF_HOME", "");
  EXPECT_EQ(hf_hub_cache_dir(), "/home/someone/.cache/huggingface/hub");
}

Json tiny_config();

TEST(LabModelSource, HubIdResolvesThroughTheCacheWithItsRevision) {
  TempDir cache;
  make_cached_model(cache.path(), "models--tiny-org--tiny-qwen2", kCommitC);
  const ScopedEnv hub("HF_HUB_CACHE", cache.path().string());
  const ModelSource source = resolve_model("tiny-org/tiny-qwen2", WeightsPolicy::kReal, {});
  EXPECT_EQ(source.kind, "hugging face cache");
  EXPECT_EQ(source.revision, kCommitC);
  EXPECT_EQ(source.weights(), "real");
  // --synthetic needs a catalog entry.
  EXPECT_THROW(resolve_model("tiny-org/tiny-qwen2", WeightsPolicy::kSynthetic, {}), Error);
}

// Weights neither in the cache nor downloadable are unavailable for a check, which says why; a
// sweep makes synthetic ones for catalog models instead, and never downloads.
TEST(LabModelSource, MissingWeightsAreUnavailableToACheckAndSyntheticToASweep) {
  TempDir cache;
  const ScopedEnv hub("HF_HUB_CACHE", cache.path().string());
  const ScopedEnv offline("HF_HUB_OFFLINE", "1");
  CatalogEntry listed;
  listed.id = "org/listed";
  listed.config = tiny_config();
  const ModelSource check = resolve_model("org/listed", WeightsPolicy::kReal, {listed});
  EXPECT_TRUE(check.unavailable());
  EXPECT_EQ(check.weights(), "");
  EXPECT_NE(check.unavailable_reason.find("HF_HUB_OFFLINE"), std::string::npos) << check.unavailable_reason;
  EXPECT_TRUE(resolve_model("org/listed", WeightsPolicy::kCachedOrSynthetic, {listed}).synthetic());
  EXPECT_TRUE(resolve_model("nobody/nothing", WeightsPolicy::kReal, {listed}).unavailable());
  EXPECT_THROW(resolve_model("nobody/nothing", WeightsPolicy::kCachedOrSynthetic, {listed}), Error);
}

// A local folder's row joins the catalog model its config.json names (_name_or_path, as
// transformers writes it), or the one --model-id names; the check's arguments carry the id.
TEST(LabModelSource, LocalFolderJoinsTheCatalogModelItsConfigOrModelIdNames) {
  TempDir dir;
  const fs::path folder = dir.path() / "m";
  fs::create_directories(folder);
  std::ofstream(folder / "config.json") << R"({"model_type": "qwen2", "_name_or_path": "org/listed"})";
  CatalogEntry listed, other;
  listed.id = "org/listed";
  other.id = "org/other";
  const std::vector<CatalogEntry> catalog = {listed, other};
  ModelSource source = resolve_model(folder.string(), WeightsPolicy::kReal, catalog);
  EXPECT_EQ(source.kind, "local folder");
  EXPECT_EQ(source.model_id, "org/listed");
  ASSERT_TRUE(source.entry.has_value());
  CheckOptions options;
  EXPECT_EQ(check_arguments(source, options)[0], folder.string());
  EXPECT_EQ(check_arguments(source, options)[1], "--model-id");
  EXPECT_EQ(check_arguments(source, options)[2], "org/listed");
  source = resolve_model(folder.string(), WeightsPolicy::kReal, catalog, "org/other");
  EXPECT_EQ(source.model_id, "org/other");
  EXPECT_EQ(source.entry->id, "org/other");
  // A name that is not a catalog id leaves the folder as the id.
  std::ofstream(folder / "config.json") << R"({"model_type": "qwen2", "_name_or_path": "/home/me/model"})";
  source = resolve_model(folder.string(), WeightsPolicy::kReal, catalog);
  EXPECT_EQ(source.model_id, folder.string());
  EXPECT_FALSE(source.entry.has_value());
  EXPECT_EQ(check_arguments(source, options).size(), 3u);  // folder, --profile, local
  // --model-id is for real weights only.
  EXPECT_THROW(resolve_model("org/listed", WeightsPolicy::kSynthetic, catalog, "org/other"), Error);
}

Json tiny_config() {
  return read_json_file((kFixtures / "qwen2/config.json").string(), ErrorKind::kCheckpoint);
}

TEST(LabSynthetic, SameSeedSameBytesOtherSeedOtherBytes) {
  TempDir dir;
  make_synthetic_checkpoint(tiny_config(), kSyntheticSeed, (dir.path() / "a").string());
  make_synthetic_checkpoint(tiny_config(), kSyntheticSeed, (dir.path() / "b").string());
  make_synthetic_checkpoint(tiny_config(), kSyntheticSeed + 1, (dir.path() / "c").string());
  const std::string a = file_bytes(dir.path() / "a/model.safetensors");
  EXPECT_GT(a.size(), 100'000u);
  EXPECT_EQ(a, file_bytes(dir.path() / "b/model.safetensors"));
  EXPECT_NE(a, file_bytes(dir.path() / "c/model.safetensors"));
  EXPECT_EQ(file_bytes(dir.path() / "a/config.json"), file_bytes(dir.path() / "b/config.json"));
  EXPECT_FALSE(fs::exists(dir.path() / (".a.tmp-" + std::to_string(getpid()))));
}

TEST(LabSynthetic, LoadsAsTheArchitectureWithBf16Weights) {
  TempDir dir;
  make_synthetic_checkpoint(tiny_config(), kSyntheticSeed, dir.path().string() + "/m");
  const Session session(dir.path().string() + "/m", uncompiled(Backend::kRef));
  EXPECT_EQ(session.spec().model_type, "qwen2");
  EXPECT_EQ(session.stored_dtype(), DType::kBF16);
  // A second call with the same config and seed keeps the folder as it is.
  const auto written = fs::last_write_time(dir.path() / "m/model.safetensors");
  make_synthetic_checkpoint(tiny_config(), kSyntheticSeed, dir.path().string() + "/m");
  EXPECT_EQ(fs::last_write_time(dir.path() / "m/model.safetensors"), written);
  // One an older canrun made, whose family read other tensors, is made again.
  const fs::path marker = dir.path() / "m/synthetic.json";
  Json recorded = read_json_file(marker.string(), ErrorKind::kIo);
  recorded["tensors"][0][0] = "model.embed_tokens.weight.weight";
  std::ofstream(marker) << recorded.dump();
  make_synthetic_checkpoint(tiny_config(), kSyntheticSeed, dir.path().string() + "/m");
  EXPECT_EQ(read_json_file(marker.string(), ErrorKind::kIo)["tensors"][0][0], "model.embed_tokens.weight");
  EXPECT_NO_THROW(Session(dir.path().string() + "/m", uncompiled(Backend::kRef)));
}

// Each norm as the model reads it: Qwen3.5's RMSNorms multiply by (1 + w), so w = 0; its gated
// linear-attention norm and its vision tower's LayerNorms multiply by w, so w = 1.
TEST(LabSynthetic, NormWeightsAreTheIdentityOfTheirOwnRule) {
  TempDir dir;
  const Json config = read_json_file((kFixtures / "qwen3_5/config.json").string(), ErrorKind::kCheckpoint);
  make_synthetic_checkpoint(config, kSyntheticSeed, (dir.path() / "m").string());
  const auto file = SafetensorsFile::open((dir.path() / "m/model.safetensors").string());
  const auto bf16_values = [&](const std::string& name) {
    const TensorRecord& tensor = file->tensors().at(name);
    std::vector<uint16_t> values(tensor.data.size() / 2);
    std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
    return values;
  };
  const auto all = [](const std::vector<uint16_t>& values, uint16_t bits) {
    return !values.empty() && std::all_of(values.begin(), values.end(), [&](uint16_t v) { return v == bits; });
  };
  constexpr uint16_t kOne = 0x3F80, kZero = 0;
  EXPECT_TRUE(all(bf16_values("model.language_model.layers.0.input_layernorm.weight"), kZero));
  EXPECT_TRUE(all(bf16_values("model.language_model.layers.0.linear_attn.norm.weight"), kOne));
  EXPECT_TRUE(all(bf16_values("model.visual.blocks.0.norm1.weight"), kOne));
  EXPECT_TRUE(all(bf16_values("model.visual.blocks.0.norm1.bias"), kZero));
}

TEST(LabSynthetic, PromptIdsAreTheBytesModuloTheVocabulary) {
  EXPECT_EQ(synthetic_prompt_ids("Ab", 1000), (std::vector<int32_t>{65, 98}));
  EXPECT_EQ(synthetic_prompt_ids("Ab", 60), (std::vector<int32_t>{5, 38}));
}

TEST(LabCheck, FixtureFolderPasses) {
  TempDir plans;
  CheckOptions options;
  options.model = (kFixtures / "llama_bf16").string();
  options.cache_dir = plans.path().string();
  const ResultRow row = run_check(options);
  EXPECT_EQ(row.result, "PASS") << row.error_message.value_or("");
  EXPECT_EQ(row.weights, "real");
  EXPECT_EQ(row.architecture, "llama");
  EXPECT_EQ(row.cores, 1);
  ASSERT_TRUE(row.generated_token_ids.has_value());
  EXPECT_EQ(row.generated_token_ids, row.reference_token_ids);
  EXPECT_EQ(row.matching_prefix_length, static_cast<int32_t>(row.generated_token_ids->size()));
  EXPECT_TRUE(row.generated_text.has_value());
  EXPECT_GT(row.compile_time_s.value_or(0), 0);
  EXPECT_EQ(row.recompilations, 0);
  EXPECT_EQ(row.plan_cache_hit, false);
  EXPECT_GT(row.peak_activation_bytes.value_or(0), 0);
  EXPECT_EQ(row.library_version.substr(0, 4), "cpu-");
  EXPECT_TRUE(row.load_time_s.has_value());
  EXPECT_GT(row.peak_host_memory_bytes.value_or(0), 0);
  EXPECT_NE(row.reproduce_script.find("build/canrun check " + options.model + " --profile local --json"),
            std::string::npos)
      << row.reproduce_script;
  EXPECT_NE(row.reproduce_script.find("Expected result: PASS"), std::string::npos);

  // The same check again finds every plan entry in the cache and generates the same tokens.
  const ResultRow again = run_check(options);
  EXPECT_EQ(again.result, "PASS") << again.error_message.value_or("");
  EXPECT_EQ(again.plan_cache_hit, true);
  EXPECT_EQ(again.recompilations, 0);
  EXPECT_EQ(again.generated_token_ids, row.generated_token_ids);
}

}  // namespace
}  // namespace canrun
