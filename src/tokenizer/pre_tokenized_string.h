// The input as a sequence of pieces on its way to tokens: added tokens are
// found first (those pieces are final), the rest is normalized, pre-tokenized
// into words and handed to the model one word at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normalized_string.h"

namespace canrun {

struct Token {
  int32_t id;
  std::string value;
  int32_t type_id = 0;  // the segment (sentence A or B) the post-processor puts it in
};

struct Split {
  NormalizedString normalized;
  std::optional<std::vector<Token>> tokens;  // set once the piece is tokenized
};

class PreTokenizedString {
 public:
  explicit PreTokenizedString(std::string text);

  // Replaces every piece not yet tokenized by what `split_fn` makes of it
  // (some of which may come out tokenized), dropping empty pieces.
  void split_pieces(const std::function<std::vector<Split>(const NormalizedString&)>& split_fn);
  // The same, when all pieces still need tokenizing.
  void split(const std::function<std::vector<NormalizedString>(NormalizedString)>& split_fn);
  void normalize(const std::function<void(NormalizedString&)>& normalize_fn);
  void tokenize(const std::function<std::vector<Token>(std::string_view)>& tokenize_fn);

  // All tokens in order; every piece must have been tokenized.
  std::vector<Token> tokens() const;

 private:
  std::vector<Split> splits_;
};

}  // namespace canrun
