#include "runtime/model_config.h"

#include <filesystem>

#include "checkpoint/config_reader.h"
#include "models/registry.h"
#include "util/json.h"

namespace canrun {
namespace {

Json read_config(const std::string& model_dir, std::string& config_path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(model_dir)) fail(ErrorKind::kIo, model_dir + ": not a folder");
  config_path = (fs::path(model_dir) / "config.json").string();
  return read_json_file(config_path, ErrorKind::kCheckpoint);
}

// A sentence-transformers folder (modules.json) runs its Transformer module as a base model:
// a causal LM's family (Qwen3-Embedding, e5-mistral) gives every token's last hidden state, its
// attention as the config says (causal unless the family reads a bidirectional flag).
DecoderSpec spec_of(const Json& config_json, const std::string& config_path, const std::string& model_dir) {
  const ConfigReader config(config_json, config_path);
  DecoderSpec spec = architecture_of(config).read_spec(config);
  if (std::filesystem::exists(std::filesystem::path(model_dir) / "modules.json"))
    spec.output = ModelOutput::kHiddenStates;
  return spec;
}

}  // namespace

DecoderSpec read_model_spec(const std::string& model_dir) {
  std::string config_path;
  const Json config_json = read_config(model_dir, config_path);
  return spec_of(config_json, config_path, model_dir);
}

ModelConfig read_model_config(const std::string& model_dir) {
  std::string config_path;
  const Json config_json = read_config(model_dir, config_path);
  ModelConfig config;
  config.spec = spec_of(config_json, config_path, model_dir);
  config.generation = read_generation_config(model_dir, config_json, config.spec.vocab_size);
  return config;
}

}  // namespace canrun
