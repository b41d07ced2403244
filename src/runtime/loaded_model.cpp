#include "runtime/loaded_model.h"

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

DecoderSpec spec_of(const Json& config_json, const std::string& config_path) {
  const ConfigReader config(config_json, config_path);
  const std::string model_type = config.string("model_type", std::nullopt);
  return find_architecture(model_type).read_spec(config);
}

}  // namespace

DecoderSpec read_model_spec(const std::string& model_dir) {
  std::string config_path;
  const Json config_json = read_config(model_dir, config_path);
  return spec_of(config_json, config_path);
}

LoadedModel load_model(const std::string& model_dir, Backend backend, std::shared_ptr<Communicator> comm,
                       bool populate_weights) {
  std::string config_path;
  const Json config_json = read_config(model_dir, config_path);
  DecoderSpec spec = spec_of(config_json, config_path);
  check_shardable(spec, comm->size());

  LoadedModel loaded;
  loaded.dir = model_dir;
  loaded.generation = read_generation_config(model_dir, config_json, spec.vocab_size);
  loaded.store = std::make_unique<WeightStore>(WeightStore::open_folder(model_dir, populate_weights));
  loaded.stored_dtype = loaded.store->stored_dtype();
  DecoderWeights weights = DecoderWeights::load(spec, *loaded.store, backend, comm->shard());
  loaded.model = std::make_unique<DecoderModel>(std::move(spec), std::move(weights), backend, std::move(comm));
  return loaded;
}

}  // namespace canrun
