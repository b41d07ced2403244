// Post-processors: wrap the encoded text in special tokens (BOS, CLS/SEP) when
// the caller asks for them.
#pragma once

#include <memory>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/pre_tokenized_string.h"

namespace canrun {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual void process(std::vector<Token>& tokens, bool add_special_tokens) const = 0;
};

// Parses tokenizer.json's "post_processor" object.
std::unique_ptr<PostProcessor> parse_post_processor(const JsonField& field);

}  // namespace canrun
