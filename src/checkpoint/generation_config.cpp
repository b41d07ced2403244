#include "checkpoint/generation_config.h"

#include <filesystem>
#include <limits>

#include "checkpoint/config_reader.h"

namespace canrun {
namespace {

std::vector<int32_t> read_ids(const ConfigReader& reader, const std::string& key, int64_t vocab_size) {
  std::vector<int32_t> ids;
  if (!reader.has(key)) return ids;
  const Json& value = reader.json()[key];
  const Json list = value.is_array() ? value : Json::array({value});
  for (const Json& id : list) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size)
      reader.reject(key, "token id " + ConfigReader::shown(id) + " is not in [0, " + std::to_string(vocab_size) + ")");
    ids.push_back(id.get<int32_t>());
  }
  return ids;
}

std::optional<int32_t> read_single_id(const ConfigReader& reader, const std::string& key,
                                      int64_t vocab_size) {
  const std::vector<int32_t> ids = read_ids(reader, key, vocab_size);
  if (ids.empty()) return std::nullopt;
  return ids.front();
}

// A finite number (`fallback` when absent) for which `in_range` holds, else an error saying `range`.
template <typename InRange>
double read_number(const ConfigReader& reader, const std::string& key, double fallback, InRange in_range,
                   const std::string& range) {
  const double value = reader.number(key, fallback);
  if (!in_range(value)) reader.reject(key, "must be " + range + ", got " + ConfigReader::shown(reader.json()[key]));
  return value;
}

}  // namespace

GenerationConfig read_generation_config(const std::string& model_dir, const Json& model_config,
                                        int64_t vocab_size) {
  const std::filesystem::path path = std::filesystem::path(model_dir) / "generation_config.json";
  const bool has_file = std::filesystem::exists(path);
  const Json json = has_file ? read_json_file(path.string(), ErrorKind::kCheckpoint) : model_config;
  const ConfigReader reader(json, has_file ? path.string() : model_dir + "/config.json");
  GenerationConfig config;
  config.eos_token_ids = read_ids(reader, "eos_token_id", vocab_size);
  config.bos_token_id = read_single_id(reader, "bos_token_id", vocab_size);
  config.pad_token_id = read_single_id(reader, "pad_token_id", vocab_size);
  config.do_sample = reader.boolean("do_sample", false);
  config.temperature = read_number(reader, "temperature", 1.0, [](double t) { return t >= 0; }, ">= 0");
  config.top_k = reader.integer("top_k", 50, 0, std::numeric_limits<int64_t>::max());
  config.top_p = read_number(reader, "top_p", 1.0, [](double p) { return p >= 0 && p <= 1; }, "in [0, 1]");
  if (reader.has("min_p"))
    config.min_p = read_number(reader, "min_p", 0, [](double p) { return p >= 0 && p <= 1; }, "in [0, 1]");
  config.repetition_penalty =
      read_number(reader, "repetition_penalty", 1.0, [](double p) { return p > 0; }, "> 0");
  return config;
}

}  // namespace canrun
