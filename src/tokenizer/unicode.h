// UTF-8 handling and the Unicode character properties the tokenizer pipeline
// relies on, matching what Rust's `char` methods answer in the tokenizers library.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canrun::unicode {

// Decodes the code point starting at text[pos] (text should be valid UTF-8; a sequence cut off
// by the end of the text reads as U+FFFD) and moves pos past it.
char32_t next_char(std::string_view text, size_t& pos);
// Byte length of the UTF-8 sequence whose lead byte is `lead`.
size_t char_length(unsigned char lead);
void append_utf8(std::string& out, char32_t c);
std::string to_utf8(char32_t c);
std::u32string to_utf32(std::string_view text);

// Replaces each maximal invalid subsequence with U+FFFD, as Rust's
// String::from_utf8_lossy and Python's errors="replace" do.
std::string to_valid_utf8(std::string_view bytes);
// The offset of the first byte that does not start a valid UTF-8 sequence; nullopt when all do.
std::optional<size_t> first_invalid_utf8(std::string_view bytes);

bool is_whitespace(char32_t c);  // White_Space property (Rust char::is_whitespace)
bool is_numeric(char32_t c);     // general category N* (Rust char::is_numeric)
bool is_word_char(char32_t c);   // Rust regex \w

// The library takes these from crates whose tables stop at Unicode 8.0
// (unicode_categories) or 9.0 (unicode-normalization-alignments): characters
// assigned later never count, and categories are those of that version.
bool is_punctuation(char32_t c);      // general category P*
bool is_other(char32_t c);            // general categories Cc, Cf, Co and Cs
bool is_nonspacing_mark(char32_t c);  // general category Mn
bool is_combining_mark(char32_t c);   // general category M*

// The full lowercase mapping of one character, without context (Rust char::to_lowercase).
std::u32string to_lowercase(char32_t c);

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };

// Normalization as the library's tables (Unicode 9.0) have it: characters
// assigned later are left as they are.
bool is_normalized(std::u32string_view text, NormalForm form);
std::u32string normalize(std::u32string_view text, NormalForm form);
// True when normalization never combines `c` with what precedes it, so text can
// be normalized piecewise between such characters.
bool has_boundary_before(char32_t c, NormalForm form);

// Where each extended grapheme cluster (a user-perceived character: a letter with its
// combining marks, CR LF, an emoji sequence) of valid UTF-8 `text` ends, by ICU's rules.
// The library's unicode-segmentation follows a later Unicode; the two differ for characters
// assigned since and for Indic conjuncts, which Unicode 15.1 keeps in one cluster.
std::vector<size_t> grapheme_ends(std::string_view text);

}  // namespace canrun::unicode
