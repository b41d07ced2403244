#include "runtime/activation_dump.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "program/step_context.h"
#include "util/error.h"
#include "util/npy.h"

namespace canrun {
namespace {

// "q_proj" of "layers.3.q_proj"; the name itself outside the layers.
std::string within_layer(const std::string& name) {
  if (!name.starts_with("layers.")) return name;
  const size_t dot = name.find('.', 7);
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace

ActivationDump::ActivationDump(std::filesystem::path dir, const Program& program, std::vector<std::string> steps,
                               const std::string& option)
    : dir_(std::move(dir)), program_(program), steps_(std::move(steps)) {
  for (const std::string& name : steps_) {
    const bool found = std::any_of(program.steps().begin(), program.steps().end(), [&](const auto& step) {
      return step->name() == name || within_layer(step->name()) == name;
    });
    if (found) continue;
    std::vector<std::string> known;
    for (const auto& step : program.steps()) {
      const std::string short_name = within_layer(step->name());
      if (std::find(known.begin(), known.end(), short_name) == known.end()) known.push_back(short_name);
    }
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(ErrorKind::kUsage, option + ": '" + name + "' is no step of this model (steps: " + list + ")");
  }
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error || !std::filesystem::is_directory(dir_))
    fail(ErrorKind::kIo, dir_.string() + ": cannot make the dump folder: " + error.message());
}

bool ActivationDump::wanted(const Step& step) const {
  if (steps_.empty()) return true;
  return std::any_of(steps_.begin(), steps_.end(),
                     [&](const std::string& name) { return step.name() == name || within_layer(step.name()) == name; });
}

void ActivationDump::after_step(const Step& step, const StepContext& context) {
  if (!wanted(step)) return;
  for (size_t i = 0; i < step.outputs().size(); ++i) {
    const ValueId id = step.outputs()[i];
    const ValueInfo& value = program_.values()[static_cast<size_t>(id)];
    const std::string label = step.outputs().size() == 1 ? step.name() : step.name() + "." + value.name;
    char index[16];
    std::snprintf(index, sizeof(index), "%04zu", entries_.size());
    const std::string file = std::string(index) + "_" + label + ".npy";
    write_npy_f32((dir_ / file).string(), context.value(id), context.rows(id), value.width);
    // Only a step's first output is the module's counterpart.
    const ModuleMatch& match = step.match();
    const bool matched = i == 0 && !match.module.empty();
    Json columns = nullptr;
    if (matched && match.column_end > match.column_begin) columns = {match.column_begin, match.column_end};
    entries_.push_back({{"index", entries_.size()},
                        {"step", step.name()},
                        {"value", value.name},
                        {"kind", std::string(step.kind())},
                        {"file", file},
                        {"shape", {context.rows(id), value.width}},
                        {"module", matched ? Json(match.module) : Json(nullptr)},
                        {"capture", matched ? Json(match.input ? "input" : "output") : Json(nullptr)},
                        {"rows", value.rows == ValueRows::kLast ? "last" : "all"},
                        {"columns", columns}});
  }
}

void ActivationDump::finish(Json about) const {
  about["format"] = "canrun-dump-1";
  about["entries"] = entries_;
  const std::filesystem::path path = dir_ / "manifest.json";
  std::ofstream out(path);
  out << about.dump(2) << "\n";
  if (!out.flush()) fail(ErrorKind::kIo, path.string() + ": cannot write");
}

}  // namespace canrun
