#include "runtime/loaded_model.h"

#include <filesystem>

#include "checkpoint/config_reader.h"
#include "models/registry.h"
#include "util/json.h"

namespace canrun {

LoadedModel load_model(const std::string& model_dir, Backend backend, bool populate_weights) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(model_dir)) fail(ErrorKind::kIo, model_dir + ": not a folder");
  const std::string config_path = (fs::path(model_dir) / "config.json").string();
  const Json config_json = read_json_file(config_path, ErrorKind::kCheckpoint);
  const ConfigReader config(config_json, config_path);
  const std::string model_type = config.string("model_type", std::nullopt);
  DecoderSpec spec = find_architecture(model_type).read_spec(config);

  LoadedModel loaded;
  loaded.dir = model_dir;
  loaded.generation = read_generation_config(model_dir, config_json, spec.vocab_size);
  loaded.store = std::make_unique<WeightStore>(WeightStore::open_folder(model_dir, populate_weights));
  loaded.stored_dtype = loaded.store->stored_dtype();
  DecoderWeights weights = DecoderWeights::load(spec, *loaded.store, backend);
  loaded.model = std::make_unique<DecoderModel>(std::move(spec), std::move(weights), backend);
  return loaded;
}

}  // namespace canrun
