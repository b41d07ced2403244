// Decoders: turn token strings back into text (byte-level bytes, '▁' to space,
// <0xAB> byte tokens, WordPiece '##' joins, ...).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/json_field.h"

namespace canrun {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Each decoder of a Sequence rewrites the list the previous one produced;
  // the final text is the concatenation.
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
};

// Parses tokenizer.json's "decoder" object.
std::unique_ptr<Decoder> parse_decoder(const JsonField& field);

}  // namespace canrun
