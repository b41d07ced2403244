#include "embed/sentence_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "checkpoint/config_reader.h"
#include "checkpoint/safetensors.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

const JsonLimits kConfigLimits{};

std::optional<Json> read_optional(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  Json json = read_json_file(path.string(), ErrorKind::kCheckpoint, kConfigLimits);
  if (!json.is_object()) fail(ErrorKind::kCheckpoint, path.string() + ": expected an object, got " + json.type_name());
  return json;
}

int64_t read_integer(const Json& json, const std::string& path, const std::string& key, int64_t min_value) {
  if (!json[key].is_number_integer() || json[key].get<int64_t>() < min_value)
    reject_config_field(path, key, json[key].dump() + " is not an integer of at least " + std::to_string(min_value));
  return json[key].get<int64_t>();
}

// The Transformer module's settings, and tokenizer_config.json's model_max_length when it has no max_seq_length.
void read_transformer(const fs::path& folder, const fs::path& model_dir, const DecoderSpec& spec,
                      SentenceModelConfig& config) {
  config.max_seq_length = spec.max_positions;
  const fs::path bert_config = folder / "sentence_bert_config.json";
  const std::optional<Json> json = read_optional(bert_config);
  if (json && json->contains("max_seq_length") && !(*json)["max_seq_length"].is_null()) {
    config.max_seq_length = std::min(read_integer(*json, bert_config.string(), "max_seq_length", 2), spec.max_positions);
  } else if (const std::optional<Json> tokenizer = read_optional(model_dir / "tokenizer_config.json");
             tokenizer && (*tokenizer)["model_max_length"].is_number()) {
    // Tokenizers without a limit store a huge number there.
    const double limit = (*tokenizer)["model_max_length"].get<double>();
    if (limit >= 2 && limit < static_cast<double>(spec.max_positions))
      config.max_seq_length = static_cast<int64_t>(limit);
  }
  if (json && json->contains("do_lower_case")) {
    if (!(*json)["do_lower_case"].is_boolean())
      reject_config_field(bert_config.string(), "do_lower_case", "expected true or false");
    config.do_lower_case = (*json)["do_lower_case"].get<bool>();
  }
}

DenseLayer read_dense(const fs::path& folder, int64_t in) {
  const fs::path config_path = folder / "config.json";
  const std::string path = config_path.string();
  const std::optional<Json> json = read_optional(config_path);
  if (!json) fail(ErrorKind::kCheckpoint, path + ": missing (a Dense module's config)");
  DenseLayer layer;
  layer.path = folder.string();
  layer.in = read_integer(*json, path, "in_features", 1);
  layer.out = read_integer(*json, path, "out_features", 1);
  if (layer.in != in)
    reject_config_field(path, "in_features", std::to_string(layer.in) + " does not match the " + std::to_string(in) +
                                    " values the previous module gives");
  const bool bias = json->value("bias", true);
  const std::string activation = json->value("activation_function", std::string("torch.nn.modules.activation.Tanh"));
  if (activation == "torch.nn.modules.activation.Tanh") {
    layer.tanh = true;
  } else if (activation != "torch.nn.modules.linear.Identity") {
    reject_config_field(path, "activation_function",
           "'" + activation + "' is not supported (supported: torch.nn.modules.linear.Identity, "
                              "torch.nn.modules.activation.Tanh)");
  }
  if (!fs::exists(folder / "model.safetensors"))
    fail(ErrorKind::kCheckpoint, (folder / "model.safetensors").string() +
                                     ": missing (a Dense module's weights; pytorch_model.bin is not read)");
  const WeightStore store = WeightStore::open_folder(folder.string());
  layer.weight = store.load_f32("linear.weight", {layer.out, layer.in});
  if (bias) layer.bias = store.load_f32("linear.bias", {layer.out});
  return layer;
}

void read_prompts(const fs::path& model_dir, SentenceModelConfig& config) {
  const fs::path file = model_dir / "config_sentence_transformers.json";
  const std::optional<Json> json = read_optional(file);
  if (!json) return;
  if (json->contains("prompts") && !(*json)["prompts"].is_null()) {
    if (!(*json)["prompts"].is_object())
      reject_config_field(file.string(), "prompts", "expected an object of name: text");
    for (const auto& [name, text] : (*json)["prompts"].items()) {
      if (!text.is_string()) reject_config_field(file.string(), "prompts." + name, "expected a string");
      config.prompts[name] = text.get<std::string>();
    }
  }
  if (json->contains("default_prompt_name") && !(*json)["default_prompt_name"].is_null()) {
    const Json& name = (*json)["default_prompt_name"];
    if (!name.is_string() || !config.prompts.count(name.get<std::string>()))
      reject_config_field(file.string(), "default_prompt_name", name.dump() + " is not one of its prompts");
    config.default_prompt_name = name.get<std::string>();
  }
}

std::string lowercase(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size())
    for (char32_t c : unicode::to_lowercase(unicode::next_char(text, pos))) unicode::append_utf8(out, c);
  return out;
}

void normalize_l2(float* v, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  // torch.nn.functional.normalize's eps.
  const double norm = std::max(std::sqrt(sum), 1e-12);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] / norm);
}

std::vector<float> apply_dense(const DenseLayer& layer, const std::vector<float>& x) {
  std::vector<float> y(static_cast<size_t>(layer.out));
  for (int64_t o = 0; o < layer.out; ++o) {
    double acc = layer.bias.empty() ? 0.0 : layer.bias[o];
    const float* w = layer.weight.data() + o * layer.in;
    for (int64_t i = 0; i < layer.in; ++i) acc += static_cast<double>(w[i]) * x[i];
    y[o] = static_cast<float>(layer.tanh ? std::tanh(acc) : acc);
  }
  return y;
}

}  // namespace

SentenceModelConfig read_sentence_model(const std::string& model_dir, const DecoderSpec& spec) {
  SentenceModelConfig config;
  const fs::path root(model_dir);
  read_prompts(root, config);
  const fs::path modules_path = root / "modules.json";
  const std::optional<Json> modules =
      fs::exists(modules_path) ? std::optional<Json>(read_json_file(modules_path.string(), ErrorKind::kCheckpoint))
                               : std::nullopt;
  if (!modules) {
    // A bare encoder: sentence-transformers wraps it in Transformer + mean Pooling.
    read_transformer(root, root, spec, config);
    config.pooling.dimension = spec.hidden_size;
    config.modules = {"Transformer", "Pooling"};
    return config;
  }
  if (!modules->is_array() || modules->empty())
    fail(ErrorKind::kCheckpoint, modules_path.string() + ": expected a list of modules");
  int64_t width = 0;  // what the last module gives per input (0: token states, not pooled yet)
  bool transformer = false, pooled = false;
  for (size_t i = 0; i < modules->size(); ++i) {
    const Json& entry = (*modules)[i];
    const std::string where = modules_path.string() + ": module " + std::to_string(i);
    if (!entry.is_object() || !entry["type"].is_string())
      fail(ErrorKind::kCheckpoint, where + ": field 'type': expected a string");
    const std::string type = entry["type"].get<std::string>();
    const std::string kind = type.substr(type.rfind('.') + 1);
    const fs::path folder = root / entry.value("path", std::string());
    if (kind == "Transformer" && !transformer && i == 0) {
      read_transformer(folder, root, spec, config);
      transformer = true;
    } else if (kind == "Pooling" && transformer && !pooled) {
      const fs::path path = folder / "config.json";
      const std::optional<Json> json = read_optional(path);
      config.pooling = json ? read_pooling_config(*json, path.string(), spec.hidden_size) : PoolingConfig{spec.hidden_size};
      width = static_cast<int64_t>(config.pooling.modes.size()) * spec.hidden_size;
      pooled = true;
    } else if (kind == "Dense" && pooled && !config.normalize) {
      config.dense.push_back(read_dense(folder, width));
      width = config.dense.back().out;
    } else if (kind == "Normalize" && pooled && !config.normalize) {
      config.normalize = true;
    } else {
      fail(ErrorKind::kCheckpoint, where + ": field 'type': '" + type +
                                       "' is not supported here (supported, in this order: Transformer, Pooling, "
                                       "Dense..., Normalize)");
    }
    config.modules.push_back(kind);
  }
  if (!pooled) fail(ErrorKind::kCheckpoint, modules_path.string() + ": no Pooling module after the Transformer");
  return config;
}

void require_encoder(const DecoderSpec& spec, const std::string& model_dir) {
  if (spec.output != ModelOutput::kHiddenStates)
    fail(ErrorKind::kUsage, model_dir + ": " + spec.model_type +
                                " generates text; embeddings come from an encoder (bert, distilbert, roberta, "
                                "xlm-roberta...) or from a sentence-transformers folder (modules.json)");
}

SentenceEncoder::SentenceEncoder(Session& session)
    : session_(session),
      tokenizer_(Tokenizer::from_file((fs::path(session.model_dir()) / "tokenizer.json").string())) {
  require_encoder(session_.spec(), session_.model_dir());
  config_ = read_sentence_model(session_.model_dir(), session_.spec());
}

int64_t SentenceEncoder::dimension() const {
  if (!config_.dense.empty()) return config_.dense.back().out;
  return static_cast<int64_t>(config_.pooling.modes.size()) * config_.pooling.dimension;
}

std::vector<PreparedText> SentenceEncoder::prepare(std::span<const std::string> texts,
                                                   const EmbedOptions& options) const {
  if (texts.empty()) fail(ErrorKind::kUsage, "no texts to embed");
  std::string prompt;
  const std::string prompt_name = options.prompt_name.value_or(config_.default_prompt_name);
  if (!prompt_name.empty()) {
    const auto found = config_.prompts.find(prompt_name);
    if (found == config_.prompts.end()) {
      std::string known;
      for (const auto& [name, text] : config_.prompts) known += (known.empty() ? "" : ", ") + name;
      fail(ErrorKind::kUsage, "--prompt-name: '" + prompt_name + "' is not a prompt of " + session_.model_dir() +
                                  "/config_sentence_transformers.json (" + (known.empty() ? "it has none" : known) +
                                  ")");
    }
    prompt = found->second;
  }
  // The prompt's own tokens, less a closing special token, are what include_prompt false leaves out.
  int64_t prompt_tokens = 0;
  if (!prompt.empty() && !config_.pooling.include_prompt) {
    const Tokenizer::Encoding encoded = tokenizer_.encode(prompt);
    prompt_tokens = static_cast<int64_t>(encoded.ids.size());
    if (prompt_tokens > 0 && tokenizer_.is_special(encoded.ids.back())) --prompt_tokens;
  }
  const size_t max_length = static_cast<size_t>(config_.max_seq_length);
  std::vector<PreparedText> prepared;
  prepared.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string text = prompt + texts[i];
    if (config_.do_lower_case) text = lowercase(text);
    Tokenizer::Encoding encoded = tokenizer_.encode(text);
    if (encoded.ids.size() > max_length) {
      if (!options.truncate)
        fail(ErrorKind::kUsage, "input " + std::to_string(i + 1) + " has " + std::to_string(encoded.ids.size()) +
                                    " tokens, over the model's max_seq_length of " + std::to_string(max_length) +
                                    " (sentence_bert_config.json), and truncation is off");
      encoded = tokenizer_.encode_truncated(text, max_length);
    }
    prepared.push_back({std::move(encoded.ids), prompt_tokens, config_.normalize || options.normalize});
  }
  return prepared;
}

Embeddings SentenceEncoder::embed(std::span<const std::string> texts, const EmbedOptions& options) {
  return embed_prepared(prepare(texts, options), options.batch_tokens);
}

Embeddings SentenceEncoder::embed_prepared(std::span<const PreparedText> texts, int64_t batch_tokens) {
  if (texts.empty()) fail(ErrorKind::kUsage, "no texts to embed");
  Embeddings result;
  result.dimension = dimension();
  result.vectors.resize(texts.size() * static_cast<size_t>(result.dimension));
  for (const PreparedText& text : texts) result.token_counts.push_back(static_cast<int64_t>(text.ids.size()));
  size_t first = 0;
  while (first < texts.size()) {
    size_t end = first;
    int64_t tokens = 0;
    std::vector<EncoderInput> batch;
    while (end < texts.size() &&
           (batch.empty() || tokens + static_cast<int64_t>(texts[end].ids.size()) <= batch_tokens)) {
      tokens += static_cast<int64_t>(texts[end].ids.size());
      batch.push_back({texts[end].ids, {}});
      ++end;
    }
    const std::vector<float> hidden = session_.encode(batch);
    ++result.forward_passes;
    int64_t row = 0;
    const int64_t width = config_.pooling.dimension;
    for (size_t i = first; i < end; ++i) {
      const int64_t count = static_cast<int64_t>(texts[i].ids.size());
      std::vector<float> vector = pool(config_.pooling, std::span<const float>(hidden).subspan(row * width, count * width),
                                       count, texts[i].prompt_tokens);
      row += count;
      for (const DenseLayer& layer : config_.dense) vector = apply_dense(layer, vector);
      if (texts[i].normalize) normalize_l2(vector.data(), result.dimension);
      std::copy(vector.begin(), vector.end(), result.vectors.begin() + static_cast<int64_t>(i) * result.dimension);
    }
    first = end;
  }
  return result;
}

}  // namespace canrun
