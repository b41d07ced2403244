#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {
namespace {

// Oniguruma's \s, \w and \h differ from PCRE2's; spelled out here they match
// what the library matches (checked over all code points PCRE2's Unicode tables know):
// \s is the White_Space property, \w is alphabetic characters, marks, decimal
// digits, connector punctuation and a few Latin-1 digit-like symbols, and \h is
// a hexadecimal digit.
std::string class_body(char escape) {
  switch (escape) {
    case 's':
      return std::string(kWhiteSpace);
    case 'w':
      return R"(\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE})";
    case 'h':
      return "0-9a-fA-F";
    default:
      return "";
  }
}

std::string translate_oniguruma(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 16);
  bool in_class = false;
  size_t class_start = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      const char lower = static_cast<char>(next | 0x20);
      const std::string body = class_body(lower);
      if (!body.empty() && (next == lower || !in_class)) {
        if (in_class) {
          out += body;
        } else {
          out += next == lower ? "[" : "[^";
          out += body + "]";
        }
      } else {
        out += c;
        out += next;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      class_start = i;
    } else if (c == ']' && in_class) {
      // A ']' right after '[' or '[^' is a literal member, not the end.
      const bool literal = i == class_start + 1 || (i == class_start + 2 && pattern[class_start + 1] == '^');
      if (!literal) in_class = false;
    }
    out += c;
  }
  return out;
}

const pcre2_code* as_code(const std::shared_ptr<const void>& code) {
  return static_cast<const pcre2_code*>(code.get());
}

}  // namespace

Regex::Regex(std::string_view pattern) {
  const std::string translated = translate_oniguruma(pattern);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    throw std::invalid_argument("invalid regex at offset " + std::to_string(error_offset) + ": " +
                                reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter on failure
  code_ = std::shared_ptr<const void>(
      code, [](const void* p) { pcre2_code_free(static_cast<pcre2_code*>(const_cast<void*>(p))); });
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(as_code(code_), nullptr), &pcre2_match_data_free);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t search_from = 0;
  bool has_previous = false;
  size_t previous_end = 0;
  while (search_from <= text.size()) {
    int rc = pcre2_match(as_code(code_), subject, text.size(), search_from, PCRE2_NO_UTF_CHECK, data.get(),
                         nullptr);
    // The JIT's small fixed stack can run out on long inputs; the interpreter uses the heap.
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(as_code(code_), subject, text.size(), search_from, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       data.get(), nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      fail(ErrorKind::kTokenizer,
           std::string("regex match failed: ") + reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const size_t begin = ovector[0], end = ovector[1];
    if (begin == end && has_previous && previous_end == end) {
      if (search_from >= text.size()) break;
      search_from += unicode::char_length(static_cast<unsigned char>(text[search_from]));
      continue;
    }
    matches.emplace_back(begin, end);
    search_from = end;
    previous_end = end;
    has_previous = true;
  }
  return matches;
}

}  // namespace canrun
