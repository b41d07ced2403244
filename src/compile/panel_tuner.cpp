#include "compile/panel_tuner.h"

#include <chrono>
#include <limits>
#include <optional>
#include <random>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/onednn_product.h"
#include "util/error.h"

namespace canrun {
namespace {

constexpr int kRepeats = 2;  // after one untimed run that warms the caches

// Below this many multiply-adds oneDNN is not tried: its call and the weights' reorder are not
// won back there (2 threads, Zen 4: 100x896x130 bf16 took 0.15 ms against the panels' 0.09 ms,
// 512x896x128 0.27 ms against 0.39 ms), and small products keep the panels' exact results.
constexpr int64_t kOnednnMinimumWork = int64_t{1} << 25;

std::vector<cpu::PanelChoice> candidates(const WeightMatrix& w, int64_t rows) {
  std::vector<cpu::PanelChoice> all;
  for (int rows_per_block : {2, 4, 6, 8}) {
    all.push_back({rows_per_block, 0});
    // Chunks keep x's rows in cache while the weights pass; only worth trying for long inputs.
    if (rows > 64) all.push_back({rows_per_block, 64});
  }
  if (rows * w.rows() * w.cols() >= kOnednnMinimumWork && cpu::onednn_runs(cpu::primitives(), rows, w))
    all.push_back({.kernel = cpu::ProductKernel::kOnednn});
  return all;
}

// The kernel's name in plan files.
std::string kernel_name(cpu::ProductKernel kernel) {
  return kernel == cpu::ProductKernel::kOnednn ? "onednn" : "panels";
}

Json choice_json(const cpu::PanelChoice& choice) {
  return {{"kernel", kernel_name(choice.kernel)},
          {"rows_per_block", choice.rows_per_block},
          {"row_chunk", choice.row_chunk}};
}

double best_seconds(const WeightMatrix& w, const KernelChoices& choices, const std::vector<float>& x, int64_t rows,
                    std::vector<float>& y) {
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run <= kRepeats; ++run) {
    const auto start = std::chrono::steady_clock::now();
    cpu::linear(x.data(), rows, w, nullptr, choices, y.data());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run > 0) best = std::min(best, seconds);
  }
  return best;
}

}  // namespace

TunedProduct tune_panel_product(const WeightMatrix& w, int64_t rows) {
  TunedProduct tuned;
  tuned.shape = {rows, w.rows(), w.cols(), w.dtype()};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * w.cols())), y(static_cast<size_t>(rows * w.rows()));
  for (float& v : x) v = dist(rng);
  double fastest = std::numeric_limits<double>::infinity();
  for (const cpu::PanelChoice& choice : candidates(w, rows)) {
    KernelChoices choices;
    choices.panels.set(tuned.shape, choice);
    const double seconds = best_seconds(w, choices, x, rows, y);
    tuned.seconds.push_back({choice, seconds});
    if (seconds < fastest) {
      fastest = seconds;
      tuned.choice = choice;
    }
  }
  return tuned;
}

Json tuned_json(const TunedProduct& tuned) {
  Json timings = Json::array();
  for (const auto& [choice, seconds] : tuned.seconds) {
    Json timing = choice_json(choice);
    timing["seconds"] = seconds;
    timings.push_back(timing);
  }
  Json json = choice_json(tuned.choice);
  json.update({{"rows", tuned.shape.rows},
               {"out", tuned.shape.out},
               {"in", tuned.shape.in},
               {"dtype", std::string(dtype_name(tuned.shape.dtype))},
               {"candidates", timings}});
  return json;
}

TunedProduct tuned_from_json(const Json& json, const std::string& where) {
  try {
    TunedProduct tuned;
    const std::string dtype = json.at("dtype").get<std::string>();
    std::optional<DType> weights;
    for (DType known : {DType::kF32, DType::kBF16, DType::kF8E4M3, DType::kI8, DType::kI4})
      if (dtype == dtype_name(known)) weights = known;
    if (!weights) fail(ErrorKind::kIo, where + ": unknown dtype '" + dtype + "'");
    tuned.shape = {json.at("rows").get<int64_t>(), json.at("out").get<int64_t>(), json.at("in").get<int64_t>(),
                   *weights};
    // Plans written before oneDNN was a choice have no "kernel": theirs are all panel choices.
    const std::string kernel = json.value("kernel", std::string(kernel_name(cpu::ProductKernel::kPanels)));
    tuned.choice = {json.at("rows_per_block").get<int>(), json.at("row_chunk").get<int64_t>()};
    if (kernel == kernel_name(cpu::ProductKernel::kOnednn))
      tuned.choice.kernel = cpu::ProductKernel::kOnednn;
    else if (kernel != kernel_name(cpu::ProductKernel::kPanels))
      fail(ErrorKind::kIo, where + ": unknown kernel '" + kernel + "'");
    bool known = tuned.choice.rows_per_block == 0;  // the instruction set's own (oneDNN's choices)
    for (int r : cpu::kPanelRowBlocks) known = known || r == tuned.choice.rows_per_block;
    if (!known || tuned.choice.row_chunk < 0) fail(ErrorKind::kIo, where + ": invalid kernel choice");
    return tuned;
  } catch (const Json::exception& e) {
    fail(ErrorKind::kIo, where + ": malformed kernel choice: " + e.what());
  }
}

}  // namespace canrun
