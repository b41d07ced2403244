// Memory estimates and core plans checked against numbers worked out by hand from the configs
// (the activations and KV cache as the model program derives them).
#include <gtest/gtest.h>

#include <algorithm>

#include "lab/catalog.h"
#include "lab/device_profile.h"
#include "lab/planner.h"

namespace canrun {
namespace {

const std::string kCatalog = std::string(CANRUN_SOURCE_DIR) + "/data/catalog.jsonl";
const DeviceProfile kTrn2 = find_profile(builtin_profiles(), "trn2");
const DeviceProfile kH200 = find_profile(builtin_profiles(), "h200");

ModelShape catalog_shape(const std::string& id) {
  for (const CatalogEntry& entry : load_catalog(kCatalog))
    if (entry.id == id) return model_shape(hf_config(entry), published_parameters(entry));
  throw std::runtime_error("no catalog entry " + id);
}

TEST(LabPlanner, Qwen3_0_6B_FitsOneTrn2Core) {
  const ModelShape shape = catalog_shape("Qwen/Qwen3-0.6B");
  EXPECT_EQ(shape.source, "architecture spec");
  // 28 layers x (q 1024x2048 + k,v 1024x1024 + o 2048x1024 + MLP 3x1024x3072 + norms 2x1024 +
  // q/k norms 2x128) + tied embedding 151936x1024 + final norm 1024.
  EXPECT_EQ(shape.parameters, 28 * 15'730'944LL + 155'582'464 + 1024);
  EXPECT_EQ(shape.parameters, 596'049'920);
  const CorePlan plan = plan_cores(shape, kTrn2, PlannerOptions{});
  // The matrices in bf16, the norms (28 x 2,304 + 1,024) in f32, as the loader holds them.
  const int64_t norms = 28 * 2'304 + 1'024;
  const int64_t weights = 2 * (596'049'920 - norms) + 4 * norms;
  EXPECT_EQ(plan.estimate.weight_bytes, weights);
  EXPECT_EQ(plan.estimate.kv_cache_bytes, 2 * 28 * 8 * 128 * 64 * 2);
  // The buffer plan of a 32-token prefill, at its widest (the MLP's gate projection): the residual
  // stream, the normed input, gate and up, 32 x (1024 + 1024 + 2 x 3072), and the pass's rotary
  // table, 32 x 128, all f32.
  EXPECT_EQ(plan.estimate.activation_bytes, (32 * 8'192 + 32 * 128) * 4);
  EXPECT_EQ(plan.estimate.overhead_bytes, 512 << 20);
  EXPECT_EQ(plan.cores, 1);
  EXPECT_EQ(plan.tp_degree, 1);
  EXPECT_EQ(plan.ep_degree, 1);
  EXPECT_EQ(plan.per_core_bytes, weights + 7'340'032 + 1'064'960 + 536'870'912);
  EXPECT_TRUE(plan.reason.empty());
}

TEST(LabPlanner, SmolLM2CountMatchesItsPublishedParameters) {
  // HuggingFaceTB/SmolLM2-135M: 134,515,008 parameters (tied embeddings).
  EXPECT_EQ(catalog_shape("HuggingFaceTB/SmolLM2-135M-Instruct").parameters, 134'515'008);
}

TEST(LabPlanner, Llama70BNeedsEightTrn2Cores) {
  const ModelShape shape = catalog_shape("meta-llama/Llama-3.1-70B-Instruct");
  // 80 x (2 x 8192x8192 + 2 x 8192x1024 + 3 x 8192x28672 + 2x8192) + 2 x 128256x8192 + 8192.
  EXPECT_EQ(shape.parameters, 70'553'706'496);
  const CorePlan plan = plan_cores(shape, kTrn2, PlannerOptions{});
  // The matrices in bf16, the norms (80 x 2 x 8192 + 8192) in f32.
  const int64_t weights = 141'107'412'992 + 2 * (80 * 2 * 8192 + 8192);
  // KV; activations (32 tokens x (2 x 8192 + 2 x 28672) + the rotary table, 32 x 128); overhead.
  const int64_t rest = 20'971'520 + (32 * 73'728 + 32 * 128) * 4 + 536'870'912;
  EXPECT_EQ(plan.estimate.weight_bytes, weights);
  // Each of 8 workers holds an eighth of every layer's projections, the layers' norms, and the
  // whole embeddings, lm_head and final norm: 80 x 855,638,016 / 8 + 2 x 128256x8192 matrix
  // weights in bf16 and 80 x 2 x 8192 + 8192 norm weights in f32.
  const int64_t worker_weights = 2 * (80 * (855'638'016LL / 8) + 2'101'346'304LL) + 4 * (80 * 2 * 8192 + 8192);
  EXPECT_EQ(per_core_bytes(shape, PlannerOptions{}, 8), worker_weights + rest);
  // 4 cores would need 37.4 GB each; 8 need 21.9 GB of the 24 GiB (25.8 GB).
  EXPECT_GT(per_core_bytes(shape, PlannerOptions{}, 4), kTrn2.memory_per_core_bytes);
  EXPECT_EQ(plan.cores, 8);
  EXPECT_EQ(plan.tp_degree, 8);
  EXPECT_EQ(plan.ep_degree, 1);
  EXPECT_EQ(plan.per_core_bytes, worker_weights + rest);
}

TEST(LabPlanner, TooLargeForTheProfileSaysWhy) {
  // The 70B model's bf16 weights alone (141.1 GB) exceed one 141 GB H200.
  const CorePlan h200 = plan_cores(catalog_shape("meta-llama/Llama-3.1-70B-Instruct"), kH200, PlannerOptions{});
  EXPECT_FALSE(h200.fits());
  EXPECT_EQ(h200.reason, "needs more than 1 core");
  const CorePlan trn2 = plan_cores(catalog_shape("meta-llama/Llama-3.1-405B-Instruct"), kTrn2, PlannerOptions{});
  EXPECT_EQ(trn2.reason, "needs more than 16 cores");
  EXPECT_NE(trn2.detail.find("24.0 GiB"), std::string::npos) << trn2.detail;
  // How much is missing, and how many cores of the profile's size would hold it.
  EXPECT_EQ(h200.reason_code, "needs_memory");
  EXPECT_NE(h200.detail.find("more than it has"), std::string::npos) << h200.detail;
  EXPECT_EQ(h200.cores_that_would_hold, 2);
  EXPECT_NE(h200.detail.find("2 cores of 131.3 GiB would hold it (tensor parallel over MPI)"), std::string::npos)
      << h200.detail;
  // 405B's worker 0 keeps one of its 8 key/value heads' attention and the embeddings at any count.
  EXPECT_EQ(trn2.cores_that_would_hold, 0);
  EXPECT_NE(trn2.detail.find("no number of cores of 24.0 GiB would hold it"), std::string::npos) << trn2.detail;
}

TEST(LabPlanner, MixtureOfExpertsSpreadsExperts) {
  // Counted from the qwen3_moe spec: 48 x (attention 18,874,368 + 128 experts 603,979,776 + router
  // 262,144 + norms 4,352) + untied embeddings 2 x 311,164,928 + final norm 2,048 (params_b: 30.532).
  const ModelShape shape = catalog_shape("Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_EQ(shape.source, "architecture spec");
  EXPECT_EQ(shape.parameters, 30'532'122'624);
  EXPECT_EQ(shape.num_experts, 128);
  EXPECT_EQ(shape.intermediate_size, 768);  // moe_intermediate_size
  const CorePlan plan = plan_cores(shape, kTrn2, PlannerOptions{});
  EXPECT_EQ(plan.cores, 4);  // 2 cores would hold 30.5 GB of weights each
  EXPECT_EQ(plan.tp_degree, 4);
  EXPECT_EQ(plan.ep_degree, 4);
}

TEST(LabPlanner, LatentAttentionCountMatchesDeepseekV2LitesPublishedParameters) {
  // The catalog's copy of the config omits q_lora_rank, which DeepSeek-V2-Lite publishes as null
  // (q_proj, no low-rank query).
  Json config;
  for (const CatalogEntry& entry : load_catalog(kCatalog))
    if (entry.id == "deepseek-ai/DeepSeek-V2-Lite-Chat") config = hf_config(entry);
  ASSERT_FALSE(config.is_null());
  config["q_lora_rank"] = nullptr;
  const ModelShape shape = model_shape(config, std::nullopt);
  EXPECT_EQ(shape.source, "architecture spec");
  // 27 x (q 2048x3072 + kv_a 2048x576 + kv_a norm 512 + kv_b 512x4096 + o 2048x2048 + norms
  // 2x2048) + layer 0's dense MLP 3x2048x10944 + 26 x (64 experts x 3x2048x1408 + router 64x2048
  // + 2 shared 3x2048x2816) + untied embeddings 2 x 102400x2048 + final norm 2048 (params_b: 15.706).
  EXPECT_EQ(shape.parameters, 27 * 13'767'168LL + 67'239'936 + 26 * 571'080'704LL + 419'430'400 + 2048);
  EXPECT_EQ(shape.parameters, 15'706'484'224);
}

TEST(LabPlanner, TheFirstWorkerHoldsTheHeadsThatDoNotDivide) {
  // Qwen2.5-0.5B over 4 workers: its 2 kv heads go to workers 0 and 1, each with 7 of the 14
  // query heads. Worker 0 per layer: q 448x896 and o 896x448, k and v 64x896, the q/k/v biases
  // (read whole: 896 + 2 x 128), a quarter of the MLP 3 x 1216x896, and the norms 2 x 896; plus
  // the tied embeddings 151936x896 and the final norm.
  const ModelShape shape = catalog_shape("Qwen/Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(shape.parameters, 494'032'768);
  // Matrices in bf16; biases and norms in f32.
  const int64_t layer = 2 * (2 * 448 * 896 + 2 * 64 * 896 + 3 * 1216 * 896) + 4 * (896 + 2 * 128 + 2 * 896);
  const int64_t worker_weights = 24 * layer + 2 * 151'936 * 896 + 4 * 896;
  const MemoryEstimate estimate = estimate_memory(shape, PlannerOptions{});
  const int64_t rest = estimate.kv_cache_bytes + estimate.activation_bytes + estimate.overhead_bytes;
  EXPECT_EQ(per_core_bytes(shape, PlannerOptions{}, 4), worker_weights + rest);
  EXPECT_EQ(per_core_bytes(shape, PlannerOptions{}, 1), estimate.weight_bytes + rest);
}

TEST(LabPlanner, AGenericShapeIsSplitAsALlamaLayoutOfItsSizes) {
  ModelShape shape;
  shape.parameters = 45'000'000'000;  // 90 GB in bf16
  shape.num_layers = 24;
  shape.hidden_size = 896;
  shape.intermediate_size = 4864;
  shape.num_heads = 16;
  shape.num_kv_heads = 16;
  shape.head_dim = 64;
  const MemoryEstimate estimate = estimate_memory(shape, PlannerOptions{});
  const int64_t rest = estimate.kv_cache_bytes + estimate.activation_bytes + estimate.overhead_bytes;
  const auto worker_share = [&](int64_t cores) {
    return static_cast<double>(per_core_bytes(shape, PlannerOptions{}, cores) - rest) / 90e9;
  };
  // Per layer: attention 896x64x(2 x 16 + 2 x kv) and the MLP 3x896x4864, split; norms 2 x 896
  // whole (and the embeddings of the 1-token vocabulary a config without vocab_size gets).
  const double mlp = 3.0 * 896 * 4864;
  double attention = 896.0 * 64 * 64;
  EXPECT_NEAR(worker_share(4), (attention / 4 + mlp / 4 + 1792) / (attention + mlp + 1792), 1e-4);
  EXPECT_EQ(plan_cores(shape, kTrn2, PlannerOptions{}).cores, 4);  // 22.5 GB and the rest
  // With 2 kv heads, worker 0 of 4 holds one and its 8 query heads: half the attention. That is
  // 25.6 GB, and with the rest more than 24 GiB: 8 cores.
  shape.num_kv_heads = 2;
  attention = 896.0 * 64 * 36;
  EXPECT_NEAR(worker_share(4), (attention / 2 + mlp / 4 + 1792) / (attention + mlp + 1792), 1e-4);
  EXPECT_EQ(plan_cores(shape, kTrn2, PlannerOptions{}).cores, 8);
}

TEST(LabPlanner, AModelThatCannotBeSplitGetsOneCore) {
  // minimax_m2 normalises q and k over the whole projection width: it runs on one worker only,
  // and MiniMax-M2.5's 229 B parameters do not fit one.
  const ModelShape shape = catalog_shape("MiniMaxAI/MiniMax-M2.5");
  const CorePlan plan = plan_cores(shape, kTrn2, PlannerOptions{});
  EXPECT_FALSE(plan.fits());
  EXPECT_EQ(plan.reason, "cannot be split, and needs more than 1 core");
  EXPECT_EQ(plan.reason_code, "cannot_shard");
  EXPECT_EQ(plan.cores_that_would_hold, 0);
  EXPECT_NE(plan.detail.find("qk norm across all heads"), std::string::npos) << plan.detail;
  EXPECT_EQ(plan_cores(shape, kH200, PlannerOptions{}).reason, "needs more than 1 core");
  DeviceProfile large{"large", 16, int64_t{1} << 40, "a large machine"};
  EXPECT_EQ(plan_cores(shape, large, PlannerOptions{}).cores, 1);
}

TEST(LabPlanner, OptionsChangeTheEstimate) {
  const ModelShape shape = catalog_shape("Qwen/Qwen3-0.6B");
  PlannerOptions f32;
  f32.weight_dtype = DType::kF32;
  f32.prompt_tokens = 96;
  const MemoryEstimate estimate = estimate_memory(shape, f32);
  EXPECT_EQ(estimate.weight_bytes, 4 * 596'049'920LL);
  EXPECT_EQ(estimate.kv_cache_bytes, 2 * 28 * 8 * 128 * 128 * 2);
}

TEST(LabPlanner, ATableReadInPlaceCountsOnlyThePagesItsTokensLookUp) {
  // Qwen2.5-7B-Instruct's untied embeddings, 152064 x 3584 in bf16: a row of 7168 bytes spans at
  // most 3 pages, so 64 tokens bring in at most 64 x 3 x 4096 bytes of the table. Its head is
  // read whole either way.
  const ModelShape untied = catalog_shape("Qwen/Qwen2.5-7B-Instruct");
  PlannerOptions in_place;
  in_place.tables_in_place = true;
  EXPECT_EQ(estimate_memory(untied, PlannerOptions{}).weight_bytes - estimate_memory(untied, in_place).weight_bytes,
            2 * 152064LL * 3584 - 64 * 3 * 4096);
  // Qwen3-0.6B's table is also its head: read whole.
  const ModelShape tied = catalog_shape("Qwen/Qwen3-0.6B");
  EXPECT_EQ(estimate_memory(tied, in_place).weight_bytes, estimate_memory(tied, PlannerOptions{}).weight_bytes);
}

TEST(LabPlanner, Fp8CheckpointsCountTheirProjectionsAtOneByte) {
  // Qwen3-0.6B's config with an FP8 quantization_config: its 28 layers' projections (q 1024x2048,
  // k and v 1024x1024, o 2048x1024, MLP 3x1024x3072) take one byte a weight; the embeddings stay
  // bf16 and the norms f32. With f32 weights, everything is f32.
  CatalogEntry entry;
  for (const CatalogEntry& e : load_catalog(kCatalog))
    if (e.id == "Qwen/Qwen3-0.6B") entry = e;
  Json config = hf_config(entry);
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  const ModelShape shape = model_shape(config, std::nullopt);
  const int64_t projections = 28 * (1024LL * 2048 + 2 * 1024 * 1024 + 2048 * 1024 + 3 * 1024 * 3072);
  EXPECT_EQ(shape.fp8_parameters, projections);
  const int64_t norms = 28 * 2'304 + 1'024;
  EXPECT_EQ(estimate_memory(shape, PlannerOptions{}).weight_bytes,
            projections + 2 * (596'049'920LL - projections - norms) + 4 * norms);
  PlannerOptions f32;
  f32.weight_dtype = DType::kF32;
  EXPECT_EQ(estimate_memory(shape, f32).weight_bytes, 4 * 596'049'920LL);
  // Without a spec (a family canrun cannot read): all but the embeddings.
  config["model_type"] = "new_family";
  config.erase("architectures");
  const ModelShape generic = model_shape(config, std::nullopt);
  EXPECT_EQ(generic.fp8_parameters, generic.parameters - 151936LL * 1024);
}

TEST(LabPlanner, PackedIntCheckpointsCountTheirProjectionsPacked) {
  // Qwen3-0.6B's config as a W4A16 (groups of 128) and a GPTQ int8 (per output) checkpoint: the
  // layers' projections take bits / 8 bytes a weight and an f32 scale per row and group; the
  // embeddings stay bf16 and the norms f32.
  CatalogEntry entry;
  for (const CatalogEntry& e : load_catalog(kCatalog))
    if (e.id == "Qwen/Qwen3-0.6B") entry = e;
  const int64_t projections = 28 * (1024LL * 2048 + 2 * 1024 * 1024 + 2048 * 1024 + 3 * 1024 * 3072);
  // Rows of each layer's projections: q 2048, k and v 1024 each, o 1024, gate and up 3072, down 1024.
  const int64_t rows = 28 * (2048 + 2 * 1024 + 1024 + 2 * 3072 + 1024);
  const int64_t norms = 28 * 2'304 + 1'024;
  const int64_t rest = 2 * (596'049'920LL - projections - norms) + 4 * norms;
  Json w4a16 = hf_config(entry);
  w4a16["quantization_config"] = {
      {"quant_method", "compressed-tensors"},
      {"format", "pack-quantized"},
      {"config_groups",
       {{"group_0",
         {{"targets", {"Linear"}},
          {"weights", {{"num_bits", 4}, {"type", "int"}, {"symmetric", true}, {"strategy", "group"}, {"group_size", 128}}}}}}}};
  EXPECT_EQ(estimate_memory(model_shape(w4a16, std::nullopt), PlannerOptions{}).weight_bytes,
            projections / 2 + projections / 128 * 4 + rest);
  Json gptq = hf_config(entry);
  gptq["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 8}, {"group_size", -1}, {"sym", true}};
  const ModelShape gptq_shape = model_shape(gptq, std::nullopt);
  EXPECT_EQ(estimate_memory(gptq_shape, PlannerOptions{}).weight_bytes, projections + rows * 4 + rest);
  PlannerOptions f32;
  f32.weight_dtype = DType::kF32;
  EXPECT_EQ(estimate_memory(gptq_shape, f32).weight_bytes, 4 * 596'049'920LL);
}

TEST(LabPlanner, GenericCountWithoutPublishedParameters) {
  const Json config = {{"model_type", "new_family"}, {"hidden_size", 64},       {"num_hidden_layers", 2},
                       {"num_attention_heads", 4},  {"num_key_value_heads", 2}, {"head_dim", 16},
                       {"intermediate_size", 128},  {"vocab_size", 1000}};
  // 2 x (64x16x(2x4 + 2x2) + 3x64x128) + 2 x 1000x64 (untied).
  EXPECT_EQ(model_shape(config, std::nullopt).parameters, 2 * (12'288 + 24'576) + 128'000);
  Json broken = config;
  broken.erase("hidden_size");
  try {
    model_shape(broken, std::nullopt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'hidden_size'"), std::string::npos) << e.what();
  }
}

TEST(LabPlanner, EveryCatalogModelGetsAPlanOrANamedError) {
  int planned = 0;
  for (const CatalogEntry& entry : load_catalog(kCatalog)) {
    try {
      plan_cores(model_shape(hf_config(entry), published_parameters(entry)), kTrn2, PlannerOptions{});
      ++planned;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("field '"), std::string::npos) << entry.id << ": " << e.what();
    }
  }
  EXPECT_GE(planned, 110);
}

}  // namespace
}  // namespace canrun
