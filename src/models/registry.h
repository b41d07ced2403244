// The architecture registry: model_type -> how to read that family's config.
// Each family lives in its own file and registers itself at start-up.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "checkpoint/config_reader.h"
#include "models/decoder_spec.h"

namespace canrun {

struct Architecture {
  std::string model_type;
  std::string description;  // one line for `canrun archs`
  std::function<DecoderSpec(const ConfigReader& config)> read_spec;
  std::vector<std::string> options;  // the config options that change the computation, for `canrun archs`
  // transformers' model classes this family implements, as a config's "architectures" names them.
  std::vector<std::string> classes;
};

const std::vector<Architecture> registered_architectures();

// Called from each family file through ArchitectureRegistration.
void register_architecture(Architecture architecture);

// Throws Error(kUnsupportedArchitecture) "UNSUPPORTED_ARCHITECTURE: <type> (supported: ...)".
const Architecture& find_architecture(const std::string& model_type);

// The family that runs a checkpoint: its model_type's, else the one implementing a class its
// "architectures" names (a model_type transformers does not know, as Kimi-K2's kimi_k2 with
// DeepseekV3ForCausalLM, loads as that class). nullptr: neither.
const Architecture* resolve_architecture(const std::string& model_type, const std::vector<std::string>& classes);

// resolve_architecture on a config's model_type and architectures; throws as find_architecture.
const Architecture& architecture_of(const ConfigReader& config);
std::vector<std::string> supported_model_types();

struct ArchitectureRegistration {
  explicit ArchitectureRegistration(Architecture architecture) {
    register_architecture(std::move(architecture));
  }
};

}  // namespace canrun
