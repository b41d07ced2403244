// Regular expressions as tokenizer.json writes them (Oniguruma syntax, what the
// tokenizers library compiles them with), run by PCRE2 in UTF + Unicode mode.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace canrun {

// The White_Space property as the body of a PCRE2 character class.
inline constexpr std::string_view kWhiteSpace =
    R"(\t\n\x0B\f\r\x20\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

class Regex {
 public:
  // Throws std::invalid_argument with PCRE2's message when the pattern is invalid.
  explicit Regex(std::string_view pattern);

  // Non-overlapping matches as byte ranges, left to right. An empty match right
  // where the previous match ended is skipped, as the tokenizers library does.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  std::shared_ptr<const void> code_;  // pcre2_code, immutable once compiled
};

}  // namespace canrun
