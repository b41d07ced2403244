// A sentence-transformers model folder run as sentence-transformers runs it: modules.json's
// Transformer (sentence_bert_config.json: max_seq_length, do_lower_case), Pooling
// (1_Pooling/config.json), Dense layers (their config.json and model.safetensors) and Normalize,
// with the prompts of config_sentence_transformers.json. A folder without modules.json is a bare
// encoder: mean pooling, as sentence-transformers makes one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "embed/pooling.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace canrun {

// A Dense module: y = act(x W^T + b), act Identity or Tanh.
struct DenseLayer {
  std::string path;  // its folder, for messages
  int64_t in = 0, out = 0;
  std::vector<float> weight, bias;  // [out, in], [out] or empty
  bool tanh = false;
};

struct SentenceModelConfig {
  int64_t max_seq_length = 0;  // tokens, special tokens included
  bool do_lower_case = false;
  PoolingConfig pooling;
  std::vector<DenseLayer> dense;
  bool normalize = false;  // a Normalize module ends the pipeline
  std::map<std::string, std::string> prompts;  // name -> text put before the input
  std::string default_prompt_name;             // empty: none
  // The modules in order, as `canrun embed --verbose` and errors name them.
  std::vector<std::string> modules;
};

// Reads the folder's sentence-transformers files for an encoder of `spec`. Errors name the file
// and field: an unknown module type, pooling mode or activation, a Dense layer whose shape does
// not follow the previous module's output.
SentenceModelConfig read_sentence_model(const std::string& model_dir, const DecoderSpec& spec);

struct EmbedOptions {
  std::optional<std::string> prompt_name;  // a key of the folder's prompts; none: its default prompt
  bool normalize = false;                  // L2-normalise even where the folder has no Normalize module
  bool truncate = true;                    // false: an input over max_seq_length is an error
  int64_t batch_tokens = 8192;             // tokens per forward pass at most (whole inputs)
};

// A text ready for the encoder: its ids (prompt put before it, cut at max_seq_length) and what its
// pooling needs.
struct PreparedText {
  std::vector<int32_t> ids;
  int64_t prompt_tokens = 0;  // the prompt's, which pooling leaves out (include_prompt false)
  bool normalize = false;     // L2-normalised at the end
};

struct Embeddings {
  int64_t dimension = 0;
  std::vector<float> vectors;        // one row of `dimension` per input, in input order
  std::vector<int64_t> token_counts;  // per input, after truncation, special tokens included
  int64_t forward_passes = 0;
};

// Throws Error(kUsage) naming `model_dir` unless `spec` is an encoder's.
void require_encoder(const DecoderSpec& spec, const std::string& model_dir);

class SentenceEncoder {
 public:
  // Runs `session`'s encoder (borrowed for as long as this lives) with the folder's tokenizer.json
  // and sentence-transformers files. Throws Error(kUsage) for a model that generates text.
  explicit SentenceEncoder(Session& session);

  // The texts tokenized as the pipeline runs them. Throws Error(kUsage) for no texts, an unknown
  // prompt name, or (not truncating) an input longer than max_seq_length. Safe from several
  // threads at once.
  std::vector<PreparedText> prepare(std::span<const std::string> texts, const EmbedOptions& options) const;
  // Their embeddings, whole texts per forward pass up to `batch_tokens` tokens (at least one each).
  Embeddings embed_prepared(std::span<const PreparedText> texts, int64_t batch_tokens);
  // prepare, then embed_prepared.
  Embeddings embed(std::span<const std::string> texts, const EmbedOptions& options);

  Session& session() { return session_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const SentenceModelConfig& config() const { return config_; }
  int64_t dimension() const;

 private:
  Session& session_;
  Tokenizer tokenizer_;
  SentenceModelConfig config_;
};

}  // namespace canrun
