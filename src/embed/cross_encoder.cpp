#include "embed/cross_encoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "checkpoint/safetensors.h"
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

int64_t label_count(const Json& config) {
  if (config.contains("num_labels") && config["num_labels"].is_number_integer()) return config["num_labels"].get<int64_t>();
  if (config.contains("id2label") && config["id2label"].is_object() && !config["id2label"].empty())
    return static_cast<int64_t>(config["id2label"].size());
  return 2;  // transformers' PretrainedConfig default
}

// sentence-transformers' choice: config.json's sentence_transformers.activation_fn, else the
// older sbert_ce_default_activation_function, else Sigmoid for one label and Identity for more.
void read_activation(const Json& config, const std::string& path, ClassifierHead& head) {
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

// out = x W^T + b for one row.
std::vector<float> affine(const std::vector<float>& w, const std::vector<float>& b, const float* x, int64_t rows,
                          int64_t cols) {
  std::vector<float> y(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double acc = b[r];
    for (int64_t c = 0; c < cols; ++c) acc += static_cast<double>(w[r * cols + c]) * x[c];
    y[r] = static_cast<float>(acc);
  }
  return y;
}

}  // namespace

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
  head.labels = label_count(config);
  if (head.labels < 1 || head.labels > 1 << 16)
    fail(ErrorKind::kCheckpoint, path + ": field 'num_labels': " + std::to_string(head.labels) + " is out of range");
  read_activation(config, path, head);
  // The head's tensors by family: BERT's pooler and classifier; DistilBERT's pre_classifier
  // (then ReLU) and classifier; RoBERTa's and MPNet's classifier.dense and out_proj.
  const std::string& prefix = spec.base_model_prefix;
  if (prefix != "bert." && prefix != "distilbert." && prefix != "roberta." && prefix != "mpnet.")
    fail(ErrorKind::kUnsupportedOption, path + ": " + spec.model_type +
                                            "'s classification head is not read by rerank (supported: bert, "
                                            "distilbert, mpnet, roberta, xlm-roberta)");
  // Mapped, not read in whole: only the head's tensors are wanted.
  const WeightStore store = WeightStore::open_folder(model_dir, /*populate=*/false);
  const int64_t h = head.hidden;
  const bool bert = prefix == "bert.", distilbert = prefix == "distilbert.";
  const std::string dense = bert ? "bert.pooler.dense" : distilbert ? "pre_classifier" : "classifier.dense";
  const std::string out = bert || distilbert ? "classifier" : "classifier.out_proj";
  head.dense_relu = distilbert;
  head.dense = store.load_f32(dense + ".weight", {h, h});
  head.dense_bias = store.load_f32(dense + ".bias", {h});
  head.out = store.load_f32(out + ".weight", {head.labels, h});
  head.out_bias = store.load_f32(out + ".bias", {head.labels});
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
    const float* first = hidden.data() + row * head_.hidden;
    row += static_cast<int64_t>(pairs[i].ids.size());
    std::vector<float> pooled = affine(head_.dense, head_.dense_bias, first, head_.hidden, head_.hidden);
    for (float& v : pooled) v = head_.dense_relu ? std::max(v, 0.0f) : std::tanh(v);
    std::vector<float> scores = affine(head_.out, head_.out_bias, pooled.data(), head_.labels, head_.hidden);
    if (!raw && head_.activation == ScoreActivation::kSigmoid)
      for (float& v : scores) v = 1.0f / (1.0f + std::exp(-v));
    scored.push_back({static_cast<int64_t>(i), std::move(scores)});
  }
  return scored;
}

std::vector<RankedDocument> CrossEncoder::rank(const std::string& query, std::span<const std::string> documents,
                                               bool raw) {
  std::vector<RankedDocument> ranked = score(query, documents, raw);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedDocument& a, const RankedDocument& b) { return a.scores[0] > b.scores[0]; });
  return ranked;
}

}  // namespace canrun
