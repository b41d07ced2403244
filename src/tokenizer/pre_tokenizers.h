// Pre-tokenizers: cut normalized text into the words the model tokenizes one
// at a time (byte-level regex splits, Metaspace, digits, whitespace, ...).
#pragma once

#include <memory>

#include "tokenizer/json_field.h"
#include "tokenizer/pre_tokenized_string.h"

namespace canrun {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(PreTokenizedString& text) const = 0;
};

// When Metaspace puts the replacement character in front of a piece.
enum class PrependScheme { kAlways, kFirst, kNever };
// Reads "prepend_scheme" (and the legacy "add_prefix_space") of a Metaspace object.
PrependScheme parse_prepend_scheme(const JsonField& field);

// Parses tokenizer.json's "pre_tokenizer" object.
std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const JsonField& field);

}  // namespace canrun
