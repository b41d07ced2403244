#include "tokenizer/pattern.h"

#include <stdexcept>

#include "tokenizer/unicode.h"

namespace canrun {
namespace {

std::vector<PatternMatch> cover(size_t text_size, const std::vector<std::pair<size_t, size_t>>& ranges) {
  std::vector<PatternMatch> out;
  size_t previous = 0;
  for (const auto& [begin, end] : ranges) {
    if (previous != begin) out.push_back({previous, begin, false});
    out.push_back({begin, end, true});
    previous = end;
  }
  if (previous != text_size) out.push_back({previous, text_size, false});
  return out;
}

}  // namespace

std::vector<PatternMatch> RegexPattern::find_matches(std::string_view text) const {
  if (text.empty()) return {{0, 0, false}};
  return cover(text.size(), regex_.find_all(text));
}

std::vector<PatternMatch> LiteralPattern::find_matches(std::string_view text) const {
  if (literal_.empty() || text.empty()) return {{0, text.size(), false}};
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t at = text.find(literal_); at != std::string_view::npos;
       at = text.find(literal_, at + literal_.size())) {
    ranges.emplace_back(at, at + literal_.size());
  }
  return cover(text.size(), ranges);
}

std::vector<PatternMatch> CharPattern::find_matches(std::string_view text) const {
  if (text.empty()) return {{0, 0, false}};
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t pos = 0; pos < text.size();) {
    const size_t begin = pos;
    if (predicate_(unicode::next_char(text, pos))) ranges.emplace_back(begin, pos);
  }
  return cover(text.size(), ranges);
}

std::vector<PatternMatch> InvertedPattern::find_matches(std::string_view text) const {
  std::vector<PatternMatch> matches = inner_->find_matches(text);
  for (PatternMatch& match : matches) match.is_match = !match.is_match;
  return matches;
}

std::shared_ptr<const Pattern> parse_pattern(const JsonField& field) {
  if (const auto literal = field.find("String")) {
    return std::make_shared<LiteralPattern>(literal->as_string());
  }
  if (const auto regex = field.find("Regex")) {
    try {
      return std::make_shared<RegexPattern>(Regex(regex->as_string()));
    } catch (const std::invalid_argument& e) {
      regex->fail(e.what());
    }
  }
  field.fail("expected {\"String\": ...} or {\"Regex\": ...}");
}

}  // namespace canrun
