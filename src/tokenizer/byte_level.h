// GPT-2's byte-level alphabet: every byte is shown as a printable character so
// that BPE can work on any input (byte 0x20, the space, becomes 'Ġ').
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace canrun::byte_level {

// The regex GPT-2 splits words with, in the form tokenizers uses.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::optional<unsigned char> char_to_byte(char32_t c);

// The alphabet characters standing for the UTF-8 bytes of `c`.
std::u32string encode_char(char32_t c);

}  // namespace canrun::byte_level
