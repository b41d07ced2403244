#include "tokenizer/byte_level.h"

#include <array>
#include <unordered_map>

#include "tokenizer/unicode.h"

namespace canrun::byte_level {
namespace {

// Printable Latin-1 bytes stand for themselves; the others are mapped, in
// order, to U+0100 and up.
std::array<char32_t, 256> make_byte_table() {
  std::array<char32_t, 256> table{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

const std::array<char32_t, 256>& byte_table() {
  static const std::array<char32_t, 256> table = make_byte_table();
  return table;
}

const std::unordered_map<char32_t, unsigned char>& char_table() {
  static const auto table = [] {
    std::unordered_map<char32_t, unsigned char> out;
    for (int b = 0; b < 256; ++b) out[byte_table()[b]] = static_cast<unsigned char>(b);
    return out;
  }();
  return table;
}

}  // namespace

std::optional<unsigned char> char_to_byte(char32_t c) {
  const auto it = char_table().find(c);
  if (it == char_table().end()) return std::nullopt;
  return it->second;
}

std::u32string encode_char(char32_t c) {
  std::u32string out;
  for (const char byte : unicode::to_utf8(c)) out.push_back(byte_table()[static_cast<unsigned char>(byte)]);
  return out;
}

}  // namespace canrun::byte_level
