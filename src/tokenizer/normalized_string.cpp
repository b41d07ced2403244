#include "tokenizer/normalized_string.h"

#include <algorithm>

namespace canrun {
namespace {

void push_char(std::string& text, std::vector<size_t>& origin, char32_t c, size_t from) {
  const size_t before = text.size();
  unicode::append_utf8(text, c);
  origin.insert(origin.end(), text.size() - before, from);
}

// Merges matches with their neighbours (or drops them) the way
// NormalizedString::split does in the tokenizers library. Returns kept ranges.
std::vector<std::pair<size_t, size_t>> apply_behavior(std::vector<PatternMatch> matches,
                                                      SplitBehavior behavior) {
  std::vector<std::pair<size_t, size_t>> kept;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const PatternMatch& m : matches) kept.emplace_back(m.begin, m.end);
      break;
    case SplitBehavior::kRemoved:
      for (const PatternMatch& m : matches) {
        if (!m.is_match) kept.emplace_back(m.begin, m.end);
      }
      break;
    case SplitBehavior::kContiguous:
      for (const PatternMatch& m : matches) {
        if (m.is_match == previous_match && !kept.empty()) {
          kept.back().second = m.end;
        } else {
          kept.emplace_back(m.begin, m.end);
        }
        previous_match = m.is_match;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const PatternMatch& m : matches) {
        if (m.is_match && !previous_match && !kept.empty()) {
          kept.back().second = m.end;
        } else {
          kept.emplace_back(m.begin, m.end);
        }
        previous_match = m.is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty()) {
          kept.back().first = it->begin;
        } else {
          kept.emplace_back(it->begin, it->end);
        }
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  return kept;
}

}  // namespace

NormalizedString::NormalizedString(std::string text) : text_(std::move(text)) {
  origin_.resize(text_.size());
  for (size_t i = 0; i < origin_.size(); ++i) origin_[i] = i;
}

void NormalizedString::map_chars(const std::function<std::u32string(char32_t)>& map) {
  std::string text;
  std::vector<size_t> origin;
  text.reserve(text_.size());
  origin.reserve(text_.size());
  for (size_t pos = 0; pos < text_.size();) {
    const size_t from = origin_[pos];
    for (const char32_t c : map(unicode::next_char(text_, pos))) push_char(text, origin, c, from);
  }
  text_ = std::move(text);
  origin_ = std::move(origin);
}

// ICU gives no alignment, so text is normalized one segment at a time (segments
// never interact); a segment that changes length is attributed to its start.
void NormalizedString::normalize(unicode::NormalForm form) {
  const std::u32string chars = unicode::to_utf32(text_);
  if (unicode::is_normalized(chars, form)) return;
  std::vector<size_t> char_origin;
  char_origin.reserve(chars.size());
  for (size_t pos = 0; pos < text_.size(); pos += unicode::char_length(text_[pos])) {
    char_origin.push_back(origin_[pos]);
  }
  std::string text;
  std::vector<size_t> origin;
  for (size_t begin = 0; begin < chars.size();) {
    size_t end = begin + 1;
    while (end < chars.size() && !unicode::has_boundary_before(chars[end], form)) ++end;
    const std::u32string segment =
        unicode::normalize(std::u32string_view(chars).substr(begin, end - begin), form);
    const bool same_length = segment.size() == end - begin;
    for (size_t k = 0; k < segment.size(); ++k) {
      push_char(text, origin, segment[k], char_origin[same_length ? begin + k : begin]);
    }
    begin = end;
  }
  text_ = std::move(text);
  origin_ = std::move(origin);
}

void NormalizedString::prepend(std::string_view prefix) {
  if (text_.empty()) return;
  const std::vector<size_t> added(prefix.size(), origin_.front());
  text_.insert(0, prefix);
  origin_.insert(origin_.begin(), added.begin(), added.end());
}

// Inserted text takes the origin of the last byte it replaces, as in the library.
void NormalizedString::replace(const Pattern& pattern, std::string_view content) {
  std::string text;
  std::vector<size_t> origin;
  for (const PatternMatch& m : pattern.find_matches(text_)) {
    if (!m.is_match) {
      text.append(text_, m.begin, m.end - m.begin);
      origin.insert(origin.end(), origin_.begin() + m.begin, origin_.begin() + m.end);
      continue;
    }
    const size_t from = m.end >= 1 ? origin_[m.end - 1] : 0;
    text.append(content);
    origin.insert(origin.end(), content.size(), from);
  }
  text_ = std::move(text);
  origin_ = std::move(origin);
}

void NormalizedString::strip(bool left, bool right) {
  size_t begin = 0, end = text_.size();
  if (left) {
    while (begin < end) {
      size_t next = begin;
      if (!unicode::is_whitespace(unicode::next_char(text_, next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(text_[start]) & 0xC0) == 0x80) --start;
      size_t next = start;
      if (!unicode::is_whitespace(unicode::next_char(text_, next))) break;
      end = start;
    }
  }
  text_ = text_.substr(begin, end - begin);
  origin_ = std::vector<size_t>(origin_.begin() + begin, origin_.begin() + end);
}

// A replacing character takes the origin of the one it replaces, an inserted one that of the byte
// before it, as the library aligns them.
void NormalizedString::transform(const std::vector<std::pair<char32_t, int>>& changes) {
  std::string text;
  std::vector<size_t> origin;
  size_t pos = 0;  // in the current text
  const auto skip_char = [&] {
    if (pos < text_.size()) pos = std::min(text_.size(), pos + unicode::char_length(text_[pos]));
  };
  for (const auto& [c, change] : changes) {
    size_t from = 0;
    if (change > 0) {
      if (pos > 0) from = origin_[pos - 1];
    } else {
      if (pos < origin_.size()) from = origin_[pos];
      skip_char();
      for (int removed = 0; removed < -change; ++removed) skip_char();
    }
    push_char(text, origin, c, from);
  }
  text_ = std::move(text);
  origin_ = std::move(origin);
}

NormalizedString NormalizedString::slice(size_t begin, size_t end) const {
  NormalizedString piece;
  piece.text_ = text_.substr(begin, end - begin);
  // An empty range maps to itself, as Rust's convert_offsets has it.
  const size_t shift =
      begin == end ? begin : *std::min_element(origin_.begin() + begin, origin_.begin() + end);
  piece.origin_.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) piece.origin_.push_back(origin_[i] - shift);
  piece.original_shift_ = original_shift_ + shift;
  return piece;
}

std::vector<NormalizedString> NormalizedString::split(const Pattern& pattern, SplitBehavior behavior) const {
  std::vector<NormalizedString> pieces;
  for (const auto& [begin, end] : apply_behavior(pattern.find_matches(text_), behavior)) {
    pieces.push_back(slice(begin, end));
  }
  return pieces;
}

}  // namespace canrun
