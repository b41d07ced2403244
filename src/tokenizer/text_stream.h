// The text of generated tokens as they arrive, for printing while generation runs: each token
// gives what it adds to the decoded text, and a character whose UTF-8 bytes are split over
// tokens is held back until its last byte arrives, so it is printed whole.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace canrun {

class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  // The text `id` completes; empty while a character is still incomplete.
  std::string push(int32_t id);
  // At the end: what is still held back (an incomplete character decodes as U+FFFD).
  std::string finish();

 private:
  // Prints `text` (the window's decode up to ids_[printed_to]) beyond `printed`, when it extends it.
  std::string advance(const std::string& printed, const std::string& text, size_t printed_to);

  const Tokenizer& tokenizer_;
  std::vector<int32_t> ids_;
  size_t context_ = 0;  // ids_[context_, printed_): the last printed tokens, decoded again as context
  size_t printed_ = 0;  // ids_[0, printed_) are printed
};

}  // namespace canrun
