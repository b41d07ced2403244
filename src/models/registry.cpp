#include "models/registry.h"

#include <algorithm>
#include <map>

#include "util/error.h"

namespace canrun {
namespace {

std::map<std::string, Architecture>& registry() {
  static std::map<std::string, Architecture> architectures;  // built before first use
  return architectures;
}

}  // namespace

void register_architecture(Architecture architecture) {
  const std::string key = architecture.model_type;
  registry().emplace(key, std::move(architecture));
}

std::vector<std::string> supported_model_types() {
  std::vector<std::string> types;
  for (const auto& [type, architecture] : registry()) types.push_back(type);
  return types;
}

const std::vector<Architecture> registered_architectures() {
  std::vector<Architecture> architectures;
  for (const auto& [type, architecture] : registry()) architectures.push_back(architecture);
  return architectures;
}

namespace {

[[noreturn]] void fail_unsupported(const std::string& model_type) {
  std::string supported;
  for (const std::string& type : supported_model_types()) supported += (supported.empty() ? "" : ", ") + type;
  fail(ErrorKind::kUnsupportedArchitecture,
       "UNSUPPORTED_ARCHITECTURE: " + model_type + " (supported: " + supported + ")");
}

}  // namespace

const Architecture& find_architecture(const std::string& model_type) {
  const auto it = registry().find(model_type);
  if (it == registry().end()) fail_unsupported(model_type);
  return it->second;
}

const Architecture* resolve_architecture(const std::string& model_type, const std::vector<std::string>& classes) {
  if (const auto it = registry().find(model_type); it != registry().end()) return &it->second;
  for (const std::string& name : classes)
    for (const auto& [type, architecture] : registry())
      if (std::find(architecture.classes.begin(), architecture.classes.end(), name) != architecture.classes.end())
        return &architecture;
  return nullptr;
}

const Architecture& architecture_of(const ConfigReader& config) {
  const std::string model_type = config.string("model_type", std::nullopt);
  std::vector<std::string> classes;
  if (config.has("architectures")) {
    const Json& names = config.json()["architectures"];
    if (!names.is_array()) config.reject("architectures", "must be a list of class names");
    for (const Json& name : names) {
      if (!name.is_string()) config.reject("architectures", "must be a list of class names");
      classes.push_back(name.get<std::string>());
    }
  }
  const Architecture* architecture = resolve_architecture(model_type, classes);
  if (architecture == nullptr) fail_unsupported(model_type);
  return *architecture;
}

}  // namespace canrun
