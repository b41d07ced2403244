// A piece of input text as normalizers and pre-tokenizers rewrite it, remembering
// where in the original input each byte came from. Offsets themselves are not
// exposed; the library consults them in one place (Metaspace's "first" scheme
// only prepends to the piece that starts the original input).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/pattern.h"
#include "tokenizer/unicode.h"

namespace canrun {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class NormalizedString {
 public:
  explicit NormalizedString(std::string text);

  const std::string& get() const { return text_; }
  bool empty() const { return text_.empty(); }
  // Byte offset in the whole original input where this piece's original text begins.
  size_t original_begin() const { return original_shift_; }

  // Replaces every character by what `map` returns for it; an empty result removes it.
  void map_chars(const std::function<std::u32string(char32_t)>& map);
  void normalize(unicode::NormalForm form);
  void prepend(std::string_view prefix);
  void replace(const Pattern& pattern, std::string_view content);
  void strip(bool left, bool right);
  // Rebuilds the text from the library's list of (character, change): 0 replaces the next
  // character of the current text, 1 is inserted, -n replaces the next character and removes
  // the n after it.
  void transform(const std::vector<std::pair<char32_t, int>>& changes);

  NormalizedString slice(size_t begin, size_t end) const;
  std::vector<NormalizedString> split(const Pattern& pattern, SplitBehavior behavior) const;

 private:
  NormalizedString() = default;

  std::string text_;
  // For each byte of text_: where its original text begins, relative to original_shift_.
  std::vector<size_t> origin_;
  size_t original_shift_ = 0;
};

}  // namespace canrun
