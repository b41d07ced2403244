// Fitting an encoding to a length as the tokenizers library does: truncation of one sequence
// or a pair (utils/truncation.rs) and padding (utils/padding.rs), and tokenizer.json's
// "truncation" and "padding" sections that set them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/pre_tokenized_string.h"
#include "tokenizer/tokenizer.h"

namespace canrun {

struct TruncationSettings {
  Tokenizer::Truncation limit;
  // Only the overflowing windows the library also makes depend on it, but it must stay below
  // every length a sequence is cut to.
  size_t stride = 0;
  std::string where;  // names the settings in messages
};

struct PaddingSettings {
  std::optional<size_t> fixed_length;  // else BatchLongest: one encoding is its own batch
  Tokenizer::Side side = Tokenizer::Side::kRight;
  size_t multiple = 0;  // pad_to_multiple_of; 0 for none
  int32_t pad_id = 0;
  int32_t pad_type_id = 0;
  std::string pad_token;
};

TruncationSettings parse_truncation(const JsonField& field);
PaddingSettings parse_padding(const JsonField& field);

// Cuts `first` and `second` (null for one sequence) to `settings.limit.max_length` tokens in
// all. Throws Error(kUsage) when the strategy cannot.
void truncate_sequences(std::vector<Token>& first, std::vector<Token>* second, const TruncationSettings& settings);
void pad_encoding(Tokenizer::Encoding& encoding, const PaddingSettings& settings);

}  // namespace canrun
