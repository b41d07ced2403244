// The compile step's tuner (compile/panel_tuner.h): which ways of running a packed product it
// times, that it keeps the fastest, and the plan's record of the choice.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "compile/panel_tuner.h"
#include "compile/weight_packing.h"
#include "kernels/cpu/onednn_product.h"
#include "kernels/cpu/primitives.h"
#include "util/error.h"
#include "random_values.h"

namespace canrun {
namespace {

struct PackedMatrix {
  std::vector<float> values;
  WeightMatrix rows;
  std::vector<float> storage;  // f32 panels; a vector of floats is aligned enough (32 bytes asked)
  WeightMatrix panels;
};

PackedMatrix packed_f32(int64_t out, int64_t in) {
  std::mt19937 rng(2);
  PackedMatrix m;
  m.values = random_values(out * in, rng);
  m.rows = WeightMatrix::f32(FloatBuffer::borrowing(m.values.data(), m.values.size()), out, in);
  m.storage.resize(static_cast<size_t>(WeightMatrix::panel_bytes(DType::kF32, out, in)) / 4 + 8);
  float* aligned = m.storage.data() + (8 - reinterpret_cast<uintptr_t>(m.storage.data()) / 4 % 8) % 8;
  pack_panels(m.rows, reinterpret_cast<std::byte*>(aligned));
  m.panels = WeightMatrix::panels_borrowing(DType::kF32, aligned, out, in);
  return m;
}

bool has_onednn(const TunedProduct& tuned) {
  return std::any_of(tuned.seconds.begin(), tuned.seconds.end(),
                     [](const auto& timed) { return timed.first.kernel == cpu::ProductKernel::kOnednn; });
}

TEST(PanelTuner, KeepsTheFastestCandidate) {
  const PackedMatrix m = packed_f32(40, 70);
  const TunedProduct tuned = tune_panel_product(m.panels, 100);
  EXPECT_EQ(tuned.shape, (cpu::PanelShape{100, 40, 70, DType::kF32}));
  ASSERT_FALSE(tuned.seconds.empty());
  const auto fastest = std::min_element(tuned.seconds.begin(), tuned.seconds.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(tuned.choice, fastest->first);
}

TEST(PanelTuner, OnednnIsTriedOnlyForLargeProducts) {
  // 2^25 multiply-adds and more: small products keep the panels' exact results.
  const PackedMatrix m = packed_f32(512, 1024);
  EXPECT_FALSE(has_onednn(tune_panel_product(m.panels, 32)));
  const bool runs = cpu::onednn_runs(cpu::primitives(), 64, m.panels);
  EXPECT_EQ(has_onednn(tune_panel_product(m.panels, 64)), runs);
  EXPECT_EQ(runs, cpu::chosen_instruction_set() != cpu::InstructionSet::kPortable);
}

TEST(PanelTuner, ChoicesSurviveThePlanFile) {
  TunedProduct onednn{{64, 512, 1024, DType::kBF16}, {.kernel = cpu::ProductKernel::kOnednn}, {}};
  TunedProduct panels{{128, 40, 70, DType::kF32}, {6, 64}, {{{6, 64}, 0.5}, {{.kernel = cpu::ProductKernel::kOnednn}, 0.7}}};
  for (const TunedProduct& tuned : {onednn, panels}) {
    const TunedProduct read = tuned_from_json(tuned_json(tuned), "graph.json");
    EXPECT_EQ(read.shape, tuned.shape);
    EXPECT_EQ(read.choice, tuned.choice);
  }
  EXPECT_EQ(tuned_json(panels).at("candidates").at(1).at("kernel"), "onednn");
}

TEST(PanelTuner, TriesEveryBlockOfRowsAndReadsOnlyThose) {
  const PackedMatrix m = packed_f32(40, 70);
  std::set<int> tried;
  for (const auto& [choice, seconds] : tune_panel_product(m.panels, 16).seconds) tried.insert(choice.rows_per_block);
  EXPECT_EQ(tried, (std::set<int>{2, 4, 6, 8}));
  Json json = tuned_json({{128, 40, 70, DType::kF32}, {8, 0}, {}});
  EXPECT_EQ(tuned_from_json(json, "graph.json").choice, (cpu::PanelChoice{8, 0}));
  json["rows_per_block"] = 3;
  EXPECT_THROW(tuned_from_json(json, "graph.json"), Error);
}

TEST(PanelTuner, PlansWithoutAKernelFieldChoseThePanels) {
  Json json = tuned_json({{128, 40, 70, DType::kF32}, {2, 64}, {}});
  json.erase("kernel");
  EXPECT_EQ(tuned_from_json(json, "graph.json").choice, (cpu::PanelChoice{2, 64}));
}

TEST(PanelTuner, AnUnknownKernelIsRefusedByName) {
  Json json = tuned_json({{128, 40, 70, DType::kF32}, {2, 64}, {}});
  json["kernel"] = "mkl";
  try {
    tuned_from_json(json, "plans/graph.json");
    FAIL() << "an unknown kernel was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plans/graph.json: unknown kernel 'mkl'"), std::string::npos) << e.what();
  }
  json["kernel"] = 3;
  EXPECT_THROW(tuned_from_json(json, "plans/graph.json"), Error);
}

}  // namespace
}  // namespace canrun
