// A cross-encoder (a *ForSequenceClassification checkpoint) run as sentence-transformers'
// CrossEncoder runs it: each (query, document) pair through the tokenizer's pair template (token
// types 1 for the document where the model has them), cut longest first to the tokenizer's
// model_max_length, the encoder, the classification head on the first token's hidden state
// (BERT: pooler dense + tanh, then classifier; DistilBERT: pre_classifier + ReLU, then
// classifier; RoBERTa, XLM-RoBERTa and MPNet: classifier.dense + tanh, then classifier.out_proj), then the activation config.json names (Sigmoid for one label when
// it names none).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "tokenizer/tokenizer.h"
#include "util/json.h"

namespace canrun {

enum class ScoreActivation { kIdentity, kSigmoid };

struct ClassifierHead {
  int64_t hidden = 0, labels = 0;
  std::vector<float> dense, dense_bias;  // [hidden, hidden]: the pooler's, pre_classifier or classifier.dense
  bool dense_relu = false;               // ReLU after it (DistilBERT), else tanh
  std::vector<float> out, out_bias;      // [labels, hidden]
  ScoreActivation activation = ScoreActivation::kSigmoid;
  std::string activation_name;  // as config.json names it, for reports
};

// Whether config.json's "architectures" names a *ForSequenceClassification head.
bool is_sequence_classifier(const Json& config);

// The folder's config.json, when it is a cross-encoder's; else Error(kUsage) naming its architectures.
Json cross_encoder_config(const std::string& model_dir);

// Throws as cross_encoder_config does, and Error(kCheckpoint) for a missing head tensor or an
// activation it does not know.
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
  Session& session_;
  Tokenizer tokenizer_;
  ClassifierHead head_;
  int64_t max_length_ = 0;
};

}  // namespace canrun
