// Post-processors: wrap the encoded sequence, or the pair of sequences, in special tokens
// (BOS, CLS/SEP) when the caller asks for them, and give every token its type id.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/pre_tokenized_string.h"

namespace canrun {

// Encoded sequences on their way to one encoding: the caller's one or two, or the pieces
// an earlier step of a Sequence cut them into. They are concatenated at the end.
using Encodings = std::vector<std::vector<Token>>;

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // How many special tokens it adds to one sequence, or to a pair; truncation leaves room for them.
  virtual size_t added_tokens(bool pair) const = 0;
  // The library's process_encodings: each input arrives with the type id of its position (0, 1).
  virtual void process(Encodings& encodings, bool add_special_tokens) const = 0;
};

// Parses tokenizer.json's "post_processor" object.
std::unique_ptr<PostProcessor> parse_post_processor(const JsonField& field);

}  // namespace canrun
