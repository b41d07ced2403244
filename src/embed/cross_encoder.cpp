#include "embed/cross_encoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "checkpoint/config_reader.h"
#include "checkpoint/safetensors.h"
#include "kernels/ref/ops.h"
#include "models/llama_like.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {

namespace fs = std::filesystem;

bool is_sequence_classifier(const Json& config) {
  if (!config.contains("architectures") || !config["architectures"].is_array()) return false;
  for (const Json& name : config["architectures"])
    if (name.is_string() && name.get<std::string>().ends_with("ForSequenceClassification")) return true;
  return false;
}

namespace {

// sentence-transformers' choice: config.json's sentence_transformers.activation_fn, else the
// older sbert_ce_default_activation_function, else Sigmoid for one label and Identity for more.
void read_score_activation(const Json& config, const std::string& path, ClassifierHead& head) {
  std::string name;
  std::string field;
  if (config.contains("sentence_transformers") && config["sentence_transformers"].is_object() &&
      config["sentence_transformers"].contains("activation_fn")) {
    field = "sentence_transformers.activation_fn";
    name = config["sentence_transformers"]["activation_fn"].is_string()
               ? config["sentence_transformers"]["activation_fn"].get<std::string>()
               : "";
  } else if (config.contains("sbert_ce_default_activation_function") &&
             !config["sbert_ce_default_activation_function"].is_null()) {
    field = "sbert_ce_default_activation_function";
    name = config[field].is_string() ? config[field].get<std::string>() : "";
  }
  if (field.empty()) {
    head.activation = head.labels == 1 ? ScoreActivation::kSigmoid : ScoreActivation::kIdentity;
    head.activation_name = head.labels == 1 ? "Sigmoid (one label)" : "Identity";
    return;
  }
  if (name == "torch.nn.modules.activation.Sigmoid") {
    head.activation = ScoreActivation::kSigmoid;
  } else if (name == "torch.nn.modules.linear.Identity") {
    head.activation = ScoreActivation::kIdentity;
  } else {
    fail(ErrorKind::kCheckpoint, path + ": field '" + field + "': '" + name +
                                     "' is not supported (supported: torch.nn.modules.linear.Identity, "
                                     "torch.nn.modules.activation.Sigmoid)");
  }
  head.activation_name = name.substr(name.rfind('.') + 1);
}

// out = x W^T + b for one row; b empty: no bias.
std::vector<float> affine(const std::vector<float>& w, const std::vector<float>& b, const float* x, int64_t rows,
                          int64_t cols) {
  std::vector<float> y(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double acc = b.empty() ? 0.0 : b[r];
    for (int64_t c = 0; c < cols; ++c) acc += static_cast<double>(w[r * cols + c]) * x[c];
    y[r] = static_cast<float>(acc);
  }
  return y;
}

// ModernBertForSequenceClassification's pooling, activation and head norm from config.json.
void read_modernbert_head(const Json& config, const std::string& path, const DecoderSpec& spec, ClassifierHead& head) {
  const ConfigReader reader(config, path);
  const std::string pooling = reader.string("classifier_pooling", std::string("cls"));
  if (pooling != "cls" && pooling != "mean")
    reader.reject("classifier_pooling", "'" + pooling + "' is not supported (supported: cls, mean)");
  head.mean_pooling = pooling == "mean";
  head.dense_activation = read_activation(reader, "classifier_activation", "gelu", spec.model_type);
  head.norm_eps = spec.norm.eps;
}

}  // namespace

int64_t classifier_labels(const Json& config) {
  if (config.contains("num_labels") && config["num_labels"].is_number_integer())
    return config["num_labels"].get<int64_t>();
  if (config.contains("id2label") && config["id2label"].is_object() && !config["id2label"].empty())
    return static_cast<int64_t>(config["id2label"].size());
  return 2;  // transformers' PretrainedConfig default
}

ClassifierHeadNames classifier_head_names(const DecoderSpec& spec, const Json& config, const std::string& path) {
  // BERT's and GTE's pooler (under the base model's prefix) and classifier; DistilBERT's
  // pre_classifier (then ReLU) and classifier; RoBERTa's and MPNet's classifier.dense and
  // out_proj; ModernBERT's head (dense, norm) and classifier.
  const std::string& prefix = spec.base_model_prefix;
  if (prefix == "bert." || spec.model_type == "gte" || spec.model_type == "new")
    return {prefix + "pooler.dense", true, "", false, "classifier"};
  if (prefix == "distilbert.") return {"pre_classifier", true, "", false, "classifier"};
  if (prefix == "roberta." || prefix == "mpnet.") return {"classifier.dense", true, "", false, "classifier.out_proj"};
  if (spec.model_type == "modernbert") {
    const ConfigReader reader(config, path);
    return {"head.dense", reader.boolean("classifier_bias", false), "head.norm", spec.norm.bias, "classifier"};
  }
  fail(ErrorKind::kUnsupportedOption, path + ": " + spec.model_type +
                                          "'s classification head is not read by rerank (supported: bert, "
                                          "distilbert, gte, modernbert, mpnet, new, roberta, xlm-roberta)");
}

Json cross_encoder_config(const std::string& model_dir) {
  const std::string path = (fs::path(model_dir) / "config.json").string();
  Json config = read_json_file(path, ErrorKind::kCheckpoint);
  if (!is_sequence_classifier(config))
    fail(ErrorKind::kUsage, path + ": field 'architectures': " +
                                (config.contains("architectures") ? config["architectures"].dump() : "absent") +
                                " names no *ForSequenceClassification head: " + model_dir +
                                " is not a cross-encoder (rerank needs one)");
  return config;
}

ClassifierHead read_classifier_head(const std::string& model_dir, const DecoderSpec& spec) {
  const std::string path = (fs::path(model_dir) / "config.json").string();
  const Json config = cross_encoder_config(model_dir);
  ClassifierHead head;
  head.hidden = spec.hidden_size;
  head.labels = classifier_labels(config);
  if (head.labels < 1 || head.labels > 1 << 16)
    fail(ErrorKind::kCheckpoint, path + ": field 'num_labels': " + std::to_string(head.labels) + " is out of range");
  read_score_activation(config, path, head);
  const ClassifierHeadNames names = classifier_head_names(spec, config, path);
  if (spec.base_model_prefix == "distilbert.") head.dense_activation = Activation::kRelu;
  if (spec.model_type == "modernbert") read_modernbert_head(config, path, spec, head);
  // Mapped, not read in whole: only the head's tensors are wanted.
  const WeightStore store = WeightStore::open_folder(model_dir, /*populate=*/false);
  const int64_t h = head.hidden;
  head.dense = store.load_f32(names.dense + ".weight", {h, h});
  if (names.dense_bias) head.dense_bias = store.load_f32(names.dense + ".bias", {h});
  if (!names.norm.empty()) {
    head.norm = store.load_f32(names.norm + ".weight", {h});
    if (names.norm_bias) head.norm_bias = store.load_f32(names.norm + ".bias", {h});
  }
  head.out = store.load_f32(names.out + ".weight", {head.labels, h});
  head.out_bias = store.load_f32(names.out + ".bias", {head.labels});
  return head;
}

CrossEncoder::CrossEncoder(Session& session)
    : session_(session),
      tokenizer_(Tokenizer::from_file((fs::path(session.model_dir()) / "tokenizer.json").string())),
      head_(read_classifier_head(session.model_dir(), session.spec())) {
  // The tokenizer's model_max_length, as the CrossEncoder's tokenizer cuts pairs, within the model's positions.
  max_length_ = session.spec().max_positions;
  const fs::path tokenizer_config = fs::path(session.model_dir()) / "tokenizer_config.json";
  if (fs::exists(tokenizer_config)) {
    const Json json = read_json_file(tokenizer_config.string(), ErrorKind::kCheckpoint);
    if (json.contains("model_max_length") && json["model_max_length"].is_number()) {
      const double limit = json["model_max_length"].get<double>();
      if (limit >= 4 && limit < static_cast<double>(max_length_)) max_length_ = static_cast<int64_t>(limit);
    }
  }
}

std::vector<RankedDocument> CrossEncoder::score(const std::string& query, std::span<const std::string> documents,
                                                bool raw) {
  if (documents.empty()) fail(ErrorKind::kUsage, "no documents to score");
  std::vector<Tokenizer::Encoding> pairs;
  pairs.reserve(documents.size());
  for (const std::string& document : documents)
    pairs.push_back(tokenizer_.encode_truncated(query, document, Tokenizer::Truncation(static_cast<size_t>(max_length_))));
  // A model without token types (RoBERTa's one type) reads type 0 everywhere.
  const bool typed = session_.spec().type_vocab_size > 1;
  std::vector<EncoderInput> inputs;
  for (const Tokenizer::Encoding& pair : pairs)
    inputs.push_back({pair.ids, typed ? std::span<const int32_t>(pair.type_ids) : std::span<const int32_t>()});
  const std::vector<float> hidden = session_.encode(inputs);
  std::vector<RankedDocument> scored;
  int64_t row = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const int64_t tokens = static_cast<int64_t>(pairs[i].ids.size());
    const std::vector<float> pooled = pool(hidden.data() + row * head_.hidden, tokens);
    row += tokens;
    std::vector<float> dense = affine(head_.dense, head_.dense_bias, pooled.data(), head_.hidden, head_.hidden);
    if (head_.dense_activation)
      ref::activation(*head_.dense_activation, dense.data(), head_.hidden, dense.data());
    else
      for (float& v : dense) v = std::tanh(v);
    if (!head_.norm.empty())
      ref::layer_norm(dense.data(), head_.norm.data(), head_.norm_bias.empty() ? nullptr : head_.norm_bias.data(),
                      1, head_.hidden, head_.norm_eps, dense.data());
    std::vector<float> scores = affine(head_.out, head_.out_bias, dense.data(), head_.labels, head_.hidden);
    if (!raw && head_.activation == ScoreActivation::kSigmoid)
      for (float& v : scores) v = 1.0f / (1.0f + std::exp(-v));
    scored.push_back({static_cast<int64_t>(i), std::move(scores)});
  }
  return scored;
}

std::vector<float> CrossEncoder::pool(const float* rows, int64_t tokens) const {
  const int64_t h = head_.hidden;
  if (!head_.mean_pooling) return {rows, rows + h};
  std::vector<double> sum(static_cast<size_t>(h), 0.0);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < h; ++j) sum[j] += rows[t * h + j];
  std::vector<float> mean(static_cast<size_t>(h));
  for (int64_t j = 0; j < h; ++j) mean[j] = static_cast<float>(sum[j] / static_cast<double>(tokens));
  return mean;
}

std::vector<RankedDocument> CrossEncoder::rank(const std::string& query, std::span<const std::string> documents,
                                               bool raw) {
  std::vector<RankedDocument> ranked = score(query, documents, raw);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedDocument& a, const RankedDocument& b) { return a.scores[0] > b.scores[0]; });
  return ranked;
}

}  // namespace canrun
