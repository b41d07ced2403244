// Models turn one pre-tokenized word into tokens: BPE (what generative models
// use), Unigram (SentencePiece's, as in XLM-RoBERTa and T5), WordPiece and WordLevel.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/pre_tokenized_string.h"

namespace canrun {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// token <-> id, as "model.vocab" gives it.
class Vocab {
 public:
  // A {"token": id, ...} object.
  static Vocab parse(const JsonField& field);
  // Pieces whose ids are their positions; a repeated piece is found under its last id.
  static Vocab from_pieces(std::vector<std::string> pieces);

  std::optional<int32_t> find(std::string_view token) const;
  const std::string* token(int32_t id) const;
  // What the library counts: distinct tokens of an object, every entry of a list of pieces.
  size_t size() const { return size_; }

 private:
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::unordered_map<int32_t, std::string> tokens_;
  size_t size_ = 0;
};

class Model {
 public:
  explicit Model(Vocab vocab) : vocab_(std::move(vocab)) {}
  virtual ~Model() = default;

  virtual std::vector<Token> tokenize(std::string_view word) const = 0;
  const Vocab& vocab() const { return vocab_; }

 protected:
  Vocab vocab_;
};

// Parses tokenizer.json's "model" object.
std::unique_ptr<Model> parse_model(const JsonField& field);

std::unique_ptr<Model> parse_bpe_model(const JsonField& field);
std::unique_ptr<Model> parse_word_piece_model(const JsonField& field);
std::unique_ptr<Model> parse_word_level_model(const JsonField& field);
std::unique_ptr<Model> parse_unigram_model(const JsonField& field);

}  // namespace canrun
