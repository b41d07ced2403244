// Normalizers: rewrite text before it is split into words (Unicode forms,
// case, whitespace, literal replacements).
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

}  // namespace canrun
