#include "tokenizer/unicode.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/uniset.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>

#include "util/error.h"

namespace canrun::unicode {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of the valid UTF-8 sequence at bytes[pos], or the length of its
// maximal invalid prefix (at least 1) negated.
int valid_sequence_length(std::string_view bytes, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  int length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k < length; ++k) {
    if (pos + k >= bytes.size()) return -k;
    const unsigned char b = byte(pos + k);
    const bool ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return -k;
  }
  return length;
}

int8_t category(char32_t c) { return static_cast<int8_t>(u_charType(static_cast<UChar32>(c))); }

uint32_t category_mask(char32_t c) { return U_GET_GC_MASK(static_cast<UChar32>(c)); }

icu::UnicodeString to_icu(std::u32string_view text) {
  return icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(text.data()),
                                       static_cast<int32_t>(text.size()));
}

std::u32string from_icu(const icu::UnicodeString& text) {
  UErrorCode status = U_ZERO_ERROR;
  std::u32string out(static_cast<size_t>(text.countChar32()), U'\0');
  text.toUTF32(reinterpret_cast<UChar32*>(out.data()), static_cast<int32_t>(out.size()), status);
  return out;
}

bool assigned_by(char32_t c, uint8_t major, uint8_t minor) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] < major || (age[0] == major && age[1] <= minor);
}

const icu::Normalizer2& base_normalizer(NormalForm form, UErrorCode& status) {
  switch (form) {
    case NormalForm::kNfc:
      return *icu::Normalizer2::getNFCInstance(status);
    case NormalForm::kNfd:
      return *icu::Normalizer2::getNFDInstance(status);
    case NormalForm::kNfkc:
      return *icu::Normalizer2::getNFKCInstance(status);
    case NormalForm::kNfkd:
      break;
  }
  return *icu::Normalizer2::getNFKDInstance(status);
}

// ICU normalizes by its own (newer) tables; the filter confines it to the
// characters Unicode 9.0 had, which is what the library's tables know.
class FilteredNormalizers {
 public:
  FilteredNormalizers() : known_(icu::UnicodeString("[:age=9.0:]"), status_) {
    known_.freeze();
    for (const NormalForm form : {NormalForm::kNfc, NormalForm::kNfd, NormalForm::kNfkc, NormalForm::kNfkd}) {
      const icu::Normalizer2& base = base_normalizer(form, status_);
      if (U_SUCCESS(status_)) {
        normalizers_[static_cast<size_t>(form)] = std::make_unique<icu::FilteredNormalizer2>(base, known_);
      }
    }
  }

  const icu::Normalizer2& get(NormalForm form) const {
    const auto& normalizer = normalizers_[static_cast<size_t>(form)];
    if (!normalizer) {
      fail(ErrorKind::kTokenizer, std::string("ICU normalization data is unavailable: ") + u_errorName(status_));
    }
    return *normalizer;
  }

 private:
  UErrorCode status_ = U_ZERO_ERROR;
  icu::UnicodeSet known_;
  std::array<std::unique_ptr<icu::FilteredNormalizer2>, 4> normalizers_;
};

const icu::Normalizer2& normalizer(NormalForm form) {
  static const FilteredNormalizers normalizers;
  return normalizers.get(form);
}

}  // namespace

size_t char_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

char32_t next_char(std::string_view text, size_t& pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  const size_t length = char_length(lead);
  if (length > text.size() - pos) {  // a sequence cut off by the end of the text
    pos = text.size();
    return kReplacement;
  }
  char32_t c = length == 1 ? lead : length == 2 ? (lead & 0x1F) : length == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (size_t k = 1; k < length; ++k) c = (c << 6) | (byte(pos + k) & 0x3F);
  pos += length;
  return c;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string to_utf8(char32_t c) {
  std::string out;
  append_utf8(out, c);
  return out;
}

std::u32string to_utf32(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) out.push_back(next_char(text, pos));
  return out;
}

std::string to_valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    const int length = valid_sequence_length(bytes, pos);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
    } else {
      append_utf8(out, kReplacement);
      pos += -length;
    }
  }
  return out;
}

std::optional<size_t> first_invalid_utf8(std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    const int length = valid_sequence_length(bytes, pos);
    if (length <= 0) return pos;
    pos += length;
  }
  return std::nullopt;
}

bool is_whitespace(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }

bool is_numeric(char32_t c) { return (category_mask(c) & U_GC_N_MASK) != 0; }

// U+166D and U+111C9 were punctuation in Unicode 8.0; later versions moved them.
bool is_punctuation(char32_t c) {
  if (c == 0x166D || c == 0x111C9) return true;
  return (category_mask(c) & U_GC_P_MASK) != 0 && assigned_by(c, 8, 0);
}

bool is_other(char32_t c) {
  constexpr uint32_t kMask = U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK | U_GC_CS_MASK;
  return (category_mask(c) & kMask) != 0 && assigned_by(c, 8, 0);
}

// Unicode 8.0 had U+1734 as a nonspacing mark, and U+1885, U+1886, U+A9BD and
// U+111C9 in other categories.
bool is_nonspacing_mark(char32_t c) {
  if (c == 0x1734) return true;
  if (c == 0x1885 || c == 0x1886 || c == 0xA9BD || c == 0x111C9) return false;
  return category(c) == U_NON_SPACING_MARK && assigned_by(c, 8, 0);
}

// U+1CF2 and U+1CF3 were marks in Unicode 9.0, U+111C9 was not.
bool is_combining_mark(char32_t c) {
  if (c == 0x1CF2 || c == 0x1CF3) return true;
  if (c == 0x111C9) return false;
  return (category_mask(c) & U_GC_M_MASK) != 0 && assigned_by(c, 9, 0);
}

bool is_word_char(char32_t c) {
  const auto code = static_cast<UChar32>(c);
  return u_hasBinaryProperty(code, UCHAR_ALPHABETIC) ||
         (category_mask(c) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0 ||
         u_hasBinaryProperty(code, UCHAR_JOIN_CONTROL);
}

std::u32string to_lowercase(char32_t c) {
  if (c < 0x80) return std::u32string(1, c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  UChar source[2];
  int32_t source_length = 0;
  U16_APPEND_UNSAFE(source, source_length, static_cast<UChar32>(c));
  UChar target[16];
  UErrorCode status = U_ZERO_ERROR;
  // A one-character string has no casing context: no final sigma, as in Rust.
  const int32_t length = u_strToLower(target, 16, source, source_length, "", &status);
  if (U_FAILURE(status)) return std::u32string(1, c);
  std::u32string out;
  for (int32_t i = 0; i < length;) {
    UChar32 mapped;
    U16_NEXT(target, i, length, mapped);
    out.push_back(static_cast<char32_t>(mapped));
  }
  return out;
}

bool is_normalized(std::u32string_view text, NormalForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const bool result = normalizer(form).isNormalized(to_icu(text), status);
  return U_SUCCESS(status) && result;
}

std::u32string normalize(std::u32string_view text, NormalForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString result = normalizer(form).normalize(to_icu(text), status);
  if (U_FAILURE(status)) {
    fail(ErrorKind::kTokenizer, std::string("Unicode normalization failed: ") + u_errorName(status));
  }
  return from_icu(result);
}

bool has_boundary_before(char32_t c, NormalForm form) {
  return normalizer(form).hasBoundaryBefore(static_cast<UChar32>(c));
}

std::vector<size_t> grapheme_ends(std::string_view text) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    fail(ErrorKind::kUsage, "a text of " + std::to_string(text.size()) + " bytes is too long to split into characters");
  }
  UErrorCode status = U_ZERO_ERROR;
  // Break iterators are not thread-safe, and cost more to make than to reuse.
  thread_local const std::unique_ptr<icu::BreakIterator> breaks(
      icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
  if (!breaks) fail(ErrorKind::kTokenizer, "ICU's character break rules are unavailable");
  icu::LocalUTextPointer utf8(utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status));
  breaks->setText(utf8.getAlias(), status);
  if (U_FAILURE(status)) {
    fail(ErrorKind::kTokenizer, std::string("grapheme segmentation failed: ") + u_errorName(status));
  }
  std::vector<size_t> ends;
  for (int32_t end = breaks->next(); end != icu::BreakIterator::DONE; end = breaks->next()) {
    ends.push_back(static_cast<size_t>(end));
  }
  // Nothing may keep pointing at the text once it is gone.
  breaks->setText(icu::UnicodeString());
  return ends;
}

}  // namespace canrun::unicode
