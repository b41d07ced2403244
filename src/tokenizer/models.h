// Models turn one pre-tokenized word into tokens: BPE (what generative models
// use), plus WordPiece and WordLevel.
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
  static Vocab parse(const JsonField& field);

  std::optional<int32_t> find(std::string_view token) const;
  const std::string* token(int32_t id) const;
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::unordered_map<int32_t, std::string> tokens_;
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

}  // namespace canrun
