// Per-step activation dumps for bisecting a disagreement with transformers: the values chosen
// steps write during the prompt's forward pass, one .npy file each ([rows, width] float32), and
// manifest.json naming for each the step, its kind and the transformers module whose output (or
// input) it corresponds to. tools/dump_transformers_steps.py writes transformers' side and
// tools/compare_steps.py names the first step that differs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "program/executor.h"
#include "util/json.h"

namespace canrun {

class ActivationDump : public StepObserver {
 public:
  // `steps`: step names to dump, each a full name ("layers.3.q_proj") or a name within every
  // layer ("q_proj"); empty: every step. Throws Error(kUsage) naming `option` for a name that
  // matches no step of `program`, and Error(kIo) when `dir` cannot be made.
  ActivationDump(std::filesystem::path dir, const Program& program, std::vector<std::string> steps,
                 const std::string& option);
  void after_step(const Step& step, const StepContext& context) override;
  // Writes manifest.json with `about` (model, backend, prompt ids...) and the entries so far.
  void finish(Json about) const;

 private:
  bool wanted(const Step& step) const;
  std::filesystem::path dir_;
  const Program& program_;
  std::vector<std::string> steps_;
  Json entries_ = Json::array();
};

}  // namespace canrun
