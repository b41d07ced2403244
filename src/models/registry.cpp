#include "models/registry.h"

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

const Architecture& find_architecture(const std::string& model_type) {
  const auto it = registry().find(model_type);
  if (it == registry().end()) {
    std::string supported;
    for (const std::string& type : supported_model_types()) supported += (supported.empty() ? "" : ", ") + type;
    fail(ErrorKind::kUnsupportedArchitecture,
         "UNSUPPORTED_ARCHITECTURE: " + model_type + " (supported: " + supported + ")");
  }
  return it->second;
}

}  // namespace canrun
