// The "Precompiled" normalizer: SentencePiece's precompiled_charsmap (XLM-RoBERTa, T5, mBART),
// applied as the tokenizers library's spm_precompiled crate does.
//
// The charsmap is base64 of [u32 trie size in bytes][the trie: little-endian u32 units of a
// Darts double array over the UTF-8 bytes of the keys][the replacements, each ending in NUL];
// a key's value is the offset of its replacement.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/normalizers.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {
namespace {

// RFC 4648 base64 with canonical padding, the only form the library's decoder accepts.
std::optional<std::string> decode_base64(std::string_view text) {
  const auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return std::nullopt;
  const size_t padding = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (size_t quantum = 0; quantum < text.size(); quantum += 4) {
    const bool last = quantum + 4 == text.size();
    const size_t digits = last ? 4 - padding : 4;
    uint32_t bits = 0;
    for (size_t i = 0; i < 4; ++i) {
      const int value = i < digits ? sextet(text[quantum + i]) : 0;
      if (value < 0) return std::nullopt;
      bits = bits << 6 | static_cast<uint32_t>(value);
    }
    const size_t byte_count = digits - 1;
    // The bits past the last byte must be zero.
    if (byte_count < 3 && (bits & ((1u << (8 * (3 - byte_count))) - 1)) != 0) return std::nullopt;
    for (size_t i = 0; i < byte_count; ++i) bytes.push_back(static_cast<char>(bits >> (16 - 8 * i) & 0xFF));
  }
  return bytes;
}

class Charsmap {
 public:
  // `where` names the charsmap in messages about a trie that points outside itself, which
  // the library only runs into (and panics at) when a text leads there.
  Charsmap(std::vector<uint32_t> units, std::string replacements, std::string where)
      : units_(std::move(units)), replacements_(std::move(replacements)), where_(std::move(where)) {}

  // The replacement of the shortest key that starts `chunk`, if any (the crate takes the first
  // of its common-prefix results). A NUL byte ends the search.
  std::optional<std::string_view> transform(std::string_view chunk) const {
    std::optional<uint32_t> first_value;
    size_t pos = offset(unit(0));
    for (const char byte : chunk) {
      const auto label = static_cast<unsigned char>(byte);
      if (label == 0) break;
      pos ^= label;
      const uint32_t node = unit(pos);
      if ((node & 0x800000FFu) != label) break;
      pos ^= offset(node);
      if ((node >> 8 & 1) != 0) {
        const uint32_t value = unit(pos) & 0x7FFFFFFFu;
        if (!first_value) first_value = value;
      }
    }
    if (!first_value) return std::nullopt;
    return replacement(*first_value);
  }

 private:
  static size_t offset(uint32_t unit) { return static_cast<size_t>(unit >> 10) << ((unit & (1u << 9)) >> 6); }

  uint32_t unit(size_t pos) const {
    if (pos >= units_.size()) {
      fail(ErrorKind::kTokenizer,
           where_ + ": the trie leads to unit " + std::to_string(pos) + " of " + std::to_string(units_.size()));
    }
    return units_[pos];
  }

  std::string_view replacement(size_t begin) const {
    if (begin > replacements_.size() ||
        (begin < replacements_.size() && (static_cast<unsigned char>(replacements_[begin]) & 0xC0) == 0x80)) {
      fail(ErrorKind::kTokenizer, where_ + ": a replacement starts at byte " + std::to_string(begin) +
                                      ", not at a character of the " + std::to_string(replacements_.size()) +
                                      " bytes of replacements");
    }
    const size_t end = replacements_.find('\0', begin);
    return std::string_view(replacements_).substr(begin, end == std::string::npos ? end : end - begin);
  }

  std::vector<uint32_t> units_;
  std::string replacements_;
  std::string where_;
};

Charsmap parse_charsmap(const JsonField& field) {
  const auto bytes = decode_base64(field.as_string());
  if (!bytes) field.fail("is not base64 with canonical padding");
  const auto read_u32 = [&](size_t at) {
    uint32_t value = 0;
    for (size_t i = 0; i < 4; ++i) {
      value |= static_cast<uint32_t>(static_cast<unsigned char>((*bytes)[at + i])) << 8 * i;
    }
    return value;
  };
  if (bytes->size() < 4) field.fail("holds " + std::to_string(bytes->size()) + " bytes, too few for the trie size");
  const size_t unit_count = read_u32(0) / 4;
  if (unit_count > (bytes->size() - 4) / 4) {
    field.fail("announces a trie of " + std::to_string(unit_count) + " units, past its " +
               std::to_string(bytes->size()) + " bytes");
  }
  std::vector<uint32_t> units(unit_count);
  for (size_t i = 0; i < unit_count; ++i) units[i] = read_u32(4 + 4 * i);
  std::string replacements = bytes->substr(4 + 4 * unit_count);
  if (const auto invalid = unicode::first_invalid_utf8(replacements)) {
    field.fail("its replacements are not UTF-8 (byte " + std::to_string(*invalid) + ")");
  }
  return Charsmap(std::move(units), std::move(replacements), field.origin() + ": " + field.path());
}

// The library's replace(): the new characters replace the old ones one for one; extra new ones
// count as inserted, and fewer new ones remove the rest of the old after the last one written
// (an entry that may belong to an earlier chunk, or to none when nothing was written yet).
void replace(std::vector<std::pair<char32_t, int>>& changes, std::string_view old_part, std::string_view new_part) {
  const std::u32string new_chars = unicode::to_utf32(new_part);
  const int difference = static_cast<int>(new_chars.size()) - static_cast<int>(unicode::to_utf32(old_part).size());
  for (const char32_t c : new_chars) changes.emplace_back(c, 0);
  if (difference > 0) {
    for (size_t i = changes.size() - static_cast<size_t>(difference); i < changes.size(); ++i) changes[i].second = 1;
  } else if (difference < 0 && !changes.empty()) {
    changes.back().second += difference;
  }
}

class Precompiled : public Normalizer {
 public:
  explicit Precompiled(Charsmap charsmap) : charsmap_(std::move(charsmap)) {}

  // A grapheme cluster shorter than 6 bytes is looked up whole first; otherwise, or when it has
  // no entry, each of its characters is looked up alone. This is how SentencePiece's compiled
  // rules reach the library.
  void normalize(NormalizedString& text) const override {
    const std::string& current = text.get();
    std::vector<std::pair<char32_t, int>> changes;
    changes.reserve(current.size());
    bool modified = false;
    size_t begin = 0;
    for (const size_t end : unicode::grapheme_ends(current)) {
      const std::string_view grapheme = std::string_view(current).substr(begin, end - begin);
      begin = end;
      if (grapheme.size() < 6) {
        if (const auto whole = charsmap_.transform(grapheme)) {
          replace(changes, grapheme, *whole);
          modified = true;
          continue;
        }
      }
      for (size_t pos = 0; pos < grapheme.size();) {
        const size_t start = pos;
        const char32_t c = unicode::next_char(grapheme, pos);
        if (const auto replaced = charsmap_.transform(grapheme.substr(start, pos - start))) {
          replace(changes, grapheme.substr(start, pos - start), *replaced);
          modified = true;
        } else {
          changes.emplace_back(c, 0);
        }
      }
    }
    if (modified) text.transform(changes);
  }

 private:
  Charsmap charsmap_;
};

}  // namespace

std::unique_ptr<Normalizer> parse_precompiled_normalizer(const JsonField& field) {
  return std::make_unique<Precompiled>(parse_charsmap(field["precompiled_charsmap"]));
}

}  // namespace canrun
