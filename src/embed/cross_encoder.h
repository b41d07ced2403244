// A cross-encoder (a *ForSequenceClassification checkpoint) run as sentence-transformers'
// CrossEncoder runs it: each (query, document) pair through the tokenizer's pair template (token
// types 1 for the document where the model has them), cut longest first to the tokenizer's
// model_max_length, the encoder, the classification head on the first token's hidden state
// (BERT: pooler dense + tanh, then classifier; DistilBERT: pre_classifier + ReLU, then
// classifier; RoBERTa, XLM-RoBERTa and MPNet: classifier.dense + tanh, then classifier.out_proj;
// ModernBERT: on the first token's or the tokens' mean, as classifier_pooling says, head.dense,
// classifier_activation and head.norm, then classifier), then the activation config.json names
// (Sigmoid for one label when it names none).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"
#include "util/json.h"

namespace canrun {

enum class ScoreActivation { kIdentity, kSigmoid };

// Where a family keeps its classification head: tensor names before ".weight" and ".bias".
struct ClassifierHeadNames {
  std::string dense;  // [hidden, hidden]: the pooler's, pre_classifier, classifier.dense or head.dense
  bool dense_bias = true;
  std::string norm;   // a LayerNorm after the dense layer's activation (ModernBERT's head.norm); empty: none
  bool norm_bias = false;
  std::string out;    // [labels, hidden], with a bias
};

struct ClassifierHead {
  int64_t hidden = 0, labels = 0;
  bool mean_pooling = false;             // the mean of the tokens' hidden states, else the first token's
  std::vector<float> dense, dense_bias;  // [hidden, hidden]; dense_bias empty: none
  std::optional<Activation> dense_activation;  // after it: ReLU (DistilBERT), gelu... (ModernBERT); none: tanh
  std::vector<float> norm, norm_bias;    // empty: no norm; norm_bias empty: none
  float norm_eps = 0;
  std::vector<float> out, out_bias;      // [labels, hidden]
  ScoreActivation activation = ScoreActivation::kSigmoid;
  std::string activation_name;  // as config.json names it, for reports
};

// Whether config.json's "architectures" names a *ForSequenceClassification head.
bool is_sequence_classifier(const Json& config);

// The folder's config.json, when it is a cross-encoder's; else Error(kUsage) naming its architectures.
Json cross_encoder_config(const std::string& model_dir);

// The number of labels config.json gives the head (num_labels, else id2label's size, else 2).
int64_t classifier_labels(const Json& config);

// The head's tensors for `spec`'s family; Error(kUnsupportedOption) naming `path` for a family
// whose head rerank does not read.
ClassifierHeadNames classifier_head_names(const DecoderSpec& spec, const Json& config, const std::string& path);

// Throws as cross_encoder_config does, and Error(kCheckpoint) for a missing head tensor or an
// activation or pooling it does not know.
ClassifierHead read_classifier_head(const std::string& model_dir, const DecoderSpec& spec);

struct RankedDocument {
  int64_t index = 0;  // in the documents as given
  std::vector<float> scores;  // one per label, after the activation
};

class CrossEncoder {
 public:
  // Runs `session`'s encoder (borrowed for as long as this lives) with the folder's tokenizer and head.
  explicit CrossEncoder(Session& session);

  // Each document's scores against `query`, in the documents' order; `raw`: the logits, before the
  // activation. Throws Error(kUsage) for no documents.
  std::vector<RankedDocument> score(const std::string& query, std::span<const std::string> documents,
                                    bool raw = false);
  // score, ordered by the first label's score, highest first (ties in the documents' order).
  std::vector<RankedDocument> rank(const std::string& query, std::span<const std::string> documents,
                                   bool raw = false);

  const ClassifierHead& head() const { return head_; }
  int64_t max_length() const { return max_length_; }

 private:
  // What the head reads of a pair's `tokens` hidden states: the first token's, or their mean.
  std::vector<float> pool(const float* rows, int64_t tokens) const;

  Session& session_;
  Tokenizer tokenizer_;
  ClassifierHead head_;
  int64_t max_length_ = 0;
};

}  // namespace canrun
