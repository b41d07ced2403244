// The shipped catalog loads and filters; a damaged catalog fails naming its line and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "lab/catalog.h"
#include "models/registry.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
const std::string kCatalog = std::string(CANRUN_SOURCE_DIR) + "/data/catalog.jsonl";

const CatalogEntry& find_entry(const std::vector<CatalogEntry>& entries, const std::string& id) {
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const CatalogEntry& e) { return e.id == id; });
  if (it == entries.end()) throw std::runtime_error("no catalog entry " + id);
  return *it;
}

TEST(LabCatalog, ShippedCatalogLoadsWithRealValues) {
  const std::vector<CatalogEntry> entries = load_catalog(kCatalog);
  EXPECT_EQ(entries.size(), 113u + 63u);
  const CatalogEntry& qwen = find_entry(entries, "Qwen/Qwen3-0.6B");
  EXPECT_EQ(qwen.line, 1);
  EXPECT_EQ(qwen.task, "text-generation");
  EXPECT_EQ(qwen.model_type, "qwen3");
  EXPECT_DOUBLE_EQ(*qwen.params_b, 0.752);
  EXPECT_EQ(qwen.license, "apache-2.0");
  EXPECT_EQ(qwen.config["hidden_size"], 1024);
  EXPECT_EQ(qwen.downloads.count, 18554097);
  EXPECT_EQ(qwen.downloads.rank, 1);
  EXPECT_EQ(qwen.downloads.as_of, "2026-05-12");
  EXPECT_FALSE(qwen.trending.rank.has_value());
  EXPECT_NE(qwen.trending.note.find("no trending rank"), std::string::npos);
  EXPECT_TRUE(qwen.selected);
  // The snapshot's null model_type, corrected from PROVENANCE.md by tools/build_catalog.py.
  EXPECT_EQ(find_entry(entries, "microsoft/phi-4").model_type, "phi3");
}

TEST(LabCatalog, UnsupportedArchitectureIsComputedFromTheRegistry) {
  const std::vector<CatalogEntry> entries = load_catalog(kCatalog);
  EXPECT_EQ(exclusion_reason(find_entry(entries, "Qwen/Qwen3-0.6B")), "");
  // Selected, and its family is in the registry now.
  const CatalogEntry& moe = find_entry(entries, "Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_TRUE(moe.selected);
  EXPECT_EQ(exclusion_reason(moe), "");
  // The file says "not prioritized yet"; the missing architecture comes first.
  const CatalogEntry& gemma3 = find_entry(entries, "google/gemma-3-4b-it");
  EXPECT_EQ(gemma3.exclusion, "not prioritized yet");
  EXPECT_EQ(exclusion_reason(gemma3), "architecture not supported: gemma3");
  // DeepSeek-V4-Flash's parameters (284B as its config counts them) do not fit 16 cores in bf16.
  EXPECT_EQ(exclusion_reason(find_entry(entries, "deepseek-ai/DeepSeek-V4-Flash")), "needs more than 16 cores");
  // tools/build_catalog.py selects every model of a supported family that fits: gpt2 and lfm2 too.
  for (const char* id : {"openai-community/gpt2", "LiquidAI/LFM2-350M"}) {
    EXPECT_TRUE(find_entry(entries, id).selected) << id;
    EXPECT_EQ(exclusion_reason(find_entry(entries, id)), "") << id;
  }
  // Nemotron 3 Nano's 2 kv heads do not divide over the 4 cores that hold it: workers 0 and 1
  // take one each, and it is selected.
  EXPECT_TRUE(find_entry(entries, "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").selected);
  // minimax_m2 cannot be split, and MiniMax-M2.5 does not fit one core.
  EXPECT_EQ(exclusion_reason(find_entry(entries, "MiniMaxAI/MiniMax-M2.5")),
            "cannot be split, and needs more than 1 core");
  // Kimi-K2's kimi_k2 runs as DeepseekV3ForCausalLM, which does not fit 16 cores.
  EXPECT_EQ(exclusion_reason(find_entry(entries, "moonshotai/Kimi-K2-Instruct")), "needs more than 16 cores");
  // A supported family too large to select keeps the file's reason.
  EXPECT_EQ(exclusion_reason(find_entry(entries, "meta-llama/Llama-3.1-405B-Instruct")), "needs more than 16 cores");
}

TEST(LabCatalog, EncoderTasksComeFromTheEncodersSnapshot) {
  const std::vector<CatalogEntry> entries = load_catalog(kCatalog);
  const CatalogEntry& minilm = find_entry(entries, "sentence-transformers/all-MiniLM-L6-v2");
  EXPECT_EQ(minilm.task, "sentence-similarity");
  EXPECT_EQ(minilm.model_type, "bert");
  EXPECT_TRUE(minilm.selected);
  EXPECT_TRUE(family_supported(minilm));
  EXPECT_EQ(minilm.sentence_transformers["pooling"]["mode"], "mean");
  const CatalogEntry& ranker = find_entry(entries, "cross-encoder/ms-marco-MiniLM-L6-v2");
  EXPECT_EQ(ranker.task, "text-ranking");
  EXPECT_TRUE(ranker.selected);
  // No config in the snapshot: no model_type, and the file's reason.
  const CatalogEntry& unknown = find_entry(entries, "intfloat/e5-large-v2");
  EXPECT_EQ(unknown.model_type, "");
  EXPECT_FALSE(unknown.selected);
  EXPECT_FALSE(family_supported(unknown));
  EXPECT_EQ(exclusion_reason(unknown), unknown.exclusion);
  EXPECT_FALSE(find_entry(entries, "ProsusAI/finbert").selected);  // text-classification: no protocol yet
  // A family that generates text embeds through a sentence-transformers folder (its model as
  // the base model), but no ranker's head is read from it.
  CatalogEntry decoder = minilm;
  decoder.model_type = "gpt2";
  decoder.architectures = {"GPT2LMHeadModel"};
  EXPECT_TRUE(family_supported(decoder));
  decoder.task = "text-ranking";
  EXPECT_FALSE(family_supported(decoder));
  EXPECT_EQ(exclusion_reason(decoder), "architecture not supported: gpt2 (as an encoder)");
  decoder.task = "text-generation";
  EXPECT_TRUE(family_supported(decoder));
}

TEST(LabCatalog, Filters) {
  const std::vector<CatalogEntry> entries = load_catalog(kCatalog);
  const auto ids = [&](const std::string& task, bool selected_only, const std::string& search,
                       const std::string& model_type) {
    CatalogFilter filter;
    filter.task = task;
    filter.selected_only = selected_only;
    filter.search = search;
    filter.model_type = model_type;
    std::vector<std::string> result;
    for (const CatalogEntry& e : filter_catalog(entries, filter)) result.push_back(e.id);
    return result;
  };
  EXPECT_EQ(ids("", false, "QWEN3-0.6", ""), std::vector<std::string>{"Qwen/Qwen3-0.6B"});
  EXPECT_EQ(ids("image-text-to-text", true, "", "").size(), 13u);
  EXPECT_EQ(ids("image-text-to-text", false, "", "").size(), 28u);
  EXPECT_EQ(ids("", false, "smollm2", "llama").size(), 3u);
  EXPECT_EQ(ids("", false, "", "no_such_type").size(), 0u);
  const std::vector<std::string> selected = ids("", true, "", "");
  EXPECT_EQ(selected.size(), 69u + 13u + 26u);  // text-generation, image-text-to-text, encoders
  for (const CatalogEntry& e : entries)
    EXPECT_EQ(e.selected, std::find(selected.begin(), selected.end(), e.id) != selected.end()) << e.id;
}

TEST(LabCatalog, HfConfigReadsAsTheFamilyConfig) {
  const Json config = hf_config(find_entry(load_catalog(kCatalog), "Qwen/Qwen3-0.6B"));
  EXPECT_FALSE(config.contains("_provenance"));
  EXPECT_FALSE(config.contains("extra"));
  EXPECT_EQ(config["attention_bias"], false);  // merged from "extra"
  EXPECT_EQ(config["model_type"], "qwen3");
  const DecoderSpec spec = find_architecture("qwen3").read_spec(ConfigReader(config, "catalog"));
  EXPECT_EQ(spec.num_kv_heads, 8);
  EXPECT_TRUE(spec.tie_embeddings);
  // The snapshot's num_experts reaches a family that reads n_routed_experts (its default is 8).
  const Json nemotron = hf_config(find_entry(load_catalog(kCatalog), "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"));
  EXPECT_EQ(find_architecture("nemotron_h").read_spec(ConfigReader(nemotron, "catalog")).moe.num_experts, 128);
}

class LabCatalogErrors : public testing::Test {
 protected:
  // A catalog whose second line is the first shipped line edited by `edit`.
  std::string damaged(const std::function<void(Json&)>& edit) {
    std::ifstream in(kCatalog);
    std::string first;
    std::getline(in, first);
    Json second = Json::parse(first);
    second["id"] = "test/second";
    edit(second);
    const fs::path path = fs::temp_directory_path() / "canrun_lab_catalog_errors.jsonl";
    std::ofstream(path) << first << "\n" << second.dump() << "\n";
    return path.string();
  }
  void expect_error(const std::string& path, const std::string& fragment) {
    try {
      load_catalog(path);
      FAIL() << "no error; expected one containing: " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ":2"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
};

TEST_F(LabCatalogErrors, NameLineAndField) {
  expect_error(damaged([](Json& j) { j["task"] = "text-to-image"; }), "field 'task'");
  expect_error(damaged([](Json& j) { j["model_type"] = nullptr; }), "field 'model_type': must not be null");
  expect_error(damaged([](Json& j) { j.erase("selected"); }), "field 'selected': is required");
  expect_error(damaged([](Json& j) { j["exclusion"] = "not prioritized yet"; }), "field 'exclusion'");
  expect_error(damaged([](Json& j) { j["selected"] = false; }), "field 'exclusion'");
  expect_error(damaged([](Json& j) { j["params_b"] = -1; }), "field 'params_b'");
  expect_error(damaged([](Json& j) { j["model_type"] = 3; }), "field 'model_type'");
  expect_error(damaged([](Json& j) { j["popularity"]["downloads"].erase("as_of"); }), "downloads: field 'rank'");
  expect_error(damaged([](Json& j) { j["popularity"]["trending"].erase("note"); }), "trending: field 'note'");
  expect_error(damaged([](Json& j) { j["id"] = "Qwen/Qwen3-0.6B"; }), "appears on an earlier line");
}

TEST_F(LabCatalogErrors, InvalidJsonNamesTheLine) {
  const fs::path path = fs::temp_directory_path() / "canrun_lab_catalog_bad_json.jsonl";
  std::ifstream in(kCatalog);
  std::string first;
  std::getline(in, first);
  std::ofstream(path) << first << "\n{\"id\": \n";
  expect_error(path.string(), "invalid JSON");
}

}  // namespace
}  // namespace canrun
