// Normalizers: rewrite text before it is split into words (Unicode forms,
// case, whitespace, literal replacements, SentencePiece's compiled rules).
#pragma once

#include <memory>

#include "tokenizer/json_field.h"
#include "tokenizer/normalized_string.h"

namespace canrun {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormalizedString& text) const = 0;
};

// Parses tokenizer.json's "normalizer" object.
std::unique_ptr<Normalizer> parse_normalizer(const JsonField& field);
// {"type": "Precompiled", "precompiled_charsmap": "<base64>"}.
std::unique_ptr<Normalizer> parse_precompiled_normalizer(const JsonField& field);

}  // namespace canrun
