#include "tokenizer/added_vocabulary.h"

#include <algorithm>

#include "tokenizer/unicode.h"

namespace canrun {
namespace {

bool ends_with_word_char(std::string_view text) {
  if (text.empty()) return false;
  size_t pos = text.size() - 1;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) --pos;
  return unicode::is_word_char(unicode::next_char(text, pos));
}

bool starts_with_word_char(std::string_view text) {
  size_t pos = 0;
  return !text.empty() && unicode::is_word_char(unicode::next_char(text, pos));
}

// Start of the whitespace run that ends `text`.
size_t trailing_space_begin(std::string_view text) {
  size_t begin = text.size();
  while (begin > 0) {
    size_t pos = begin - 1;
    while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) --pos;
    size_t next = pos;
    if (!unicode::is_whitespace(unicode::next_char(text, next))) break;
    begin = pos;
  }
  return begin;
}

// Length of the whitespace run that starts `text`.
size_t leading_space_length(std::string_view text) {
  size_t end = 0;
  while (end < text.size()) {
    size_t next = end;
    if (!unicode::is_whitespace(unicode::next_char(text, next))) break;
    end = next;
  }
  return end;
}

}  // namespace

void AddedVocabulary::Matcher::add(std::string_view pattern, int32_t id) {
  if (pattern.empty()) return;
  size_t node = 0;
  for (const char c : pattern) {
    const auto byte = static_cast<unsigned char>(c);
    auto it = nodes_[node].children.find(byte);
    if (it == nodes_[node].children.end()) {
      nodes_.push_back(Node{});
      it = nodes_[node].children.emplace(byte, nodes_.size() - 1).first;
    }
    node = it->second;
  }
  if (!nodes_[node].id) nodes_[node].id = id;
}

std::vector<AddedVocabulary::Matcher::Match> AddedVocabulary::Matcher::find_all(std::string_view text) const {
  std::vector<Match> matches;
  if (nodes_.front().children.empty()) return matches;
  for (size_t begin = 0; begin < text.size();) {
    std::optional<Match> longest;
    size_t node = 0;
    for (size_t pos = begin; pos < text.size(); ++pos) {
      const auto it = nodes_[node].children.find(static_cast<unsigned char>(text[pos]));
      if (it == nodes_[node].children.end()) break;
      node = it->second;
      if (nodes_[node].id) longest = Match{begin, pos + 1, *nodes_[node].id};
    }
    if (longest) {
      matches.push_back(*longest);
      begin = longest->end;
    } else {
      ++begin;
    }
  }
  return matches;
}

void AddedVocabulary::add(const AddedToken& token, const Vocab& model_vocab, const Normalizer* normalizer) {
  if (token.content.empty()) return;
  std::optional<int32_t> id = token_to_id(token.content);
  if (id && tokens_.contains(*id) && tokens_.at(*id) == token) return;
  if (!id) id = model_vocab.find(token.content);
  if (!id) {
    const auto model_size = static_cast<int32_t>(model_vocab.size());
    id = max_id_ && (*max_id_ >= model_size || model_size == 0) ? *max_id_ + 1 : model_size;
  }
  if (token.normalized && normalizer != nullptr) {
    NormalizedString content(token.content);
    normalizer->normalize(content);
    if (content.get() != token.content) normalized_forms_[*id] = content.get();
  }
  ids_[token.content] = *id;
  if (token.special) special_contents_.insert(token.content);
  tokens_[*id] = token;
  max_id_ = std::max(max_id_.value_or(*id), *id);
}

void AddedVocabulary::build_matchers() {
  raw_matcher_ = Matcher();
  normalized_matcher_ = Matcher();
  std::map<int32_t, const AddedToken*> by_id;
  for (const auto& [id, token] : tokens_) by_id.emplace(id, &token);
  for (const auto& [id, token] : by_id) {
    if (token->normalized) {
      normalized_matcher_.add(*decode_form(id), id);
    } else {
      raw_matcher_.add(token->content, id);
    }
  }
}

std::vector<Split> AddedVocabulary::split_on_tokens(const NormalizedString& text,
                                                    const Matcher& matcher) const {
  const std::string& sentence = text.get();
  std::vector<Split> splits;
  const auto add_split = [&](size_t begin, size_t end, std::optional<int32_t> id) {
    NormalizedString piece = text.slice(begin, end);
    std::optional<std::vector<Token>> tokens;
    if (id) tokens = std::vector<Token>{{*id, piece.get()}};
    splits.push_back({std::move(piece), std::move(tokens)});
  };
  size_t previous_end = 0;
  for (Matcher::Match match : matcher.find_all(sentence)) {
    const AddedToken& token = tokens_.at(match.id);
    if (token.single_word) {
      const bool space_before =
          match.begin == 0 || !ends_with_word_char(std::string_view(sentence).substr(0, match.begin));
      const bool space_after = match.end == sentence.size() ||
                               !starts_with_word_char(std::string_view(sentence).substr(match.end));
      if (!space_before || !space_after) continue;
    }
    if (token.lstrip) {
      match.begin =
          std::max(trailing_space_begin(std::string_view(sentence).substr(0, match.begin)), previous_end);
    }
    if (token.rstrip) match.end += leading_space_length(std::string_view(sentence).substr(match.end));
    if (previous_end < match.begin) add_split(previous_end, match.begin, std::nullopt);
    add_split(match.begin, match.end, match.id);
    previous_end = match.end;
  }
  if (previous_end != sentence.size() || sentence.empty())
    add_split(previous_end, sentence.size(), std::nullopt);
  return splits;
}

PreTokenizedString AddedVocabulary::extract_and_normalize(std::string_view text,
                                                          const Normalizer* normalizer) const {
  PreTokenizedString pieces{std::string(text)};
  pieces.split_pieces([&](const NormalizedString& piece) { return split_on_tokens(piece, raw_matcher_); });
  pieces.split_pieces([&](const NormalizedString& piece) {
    NormalizedString normalized = piece;
    if (normalizer != nullptr) normalizer->normalize(normalized);
    return split_on_tokens(normalized, normalized_matcher_);
  });
  return pieces;
}

std::optional<int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto it = ids_.find(content);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const AddedToken* AddedVocabulary::find(int32_t id) const {
  const auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

const std::string* AddedVocabulary::decode_form(int32_t id) const {
  if (const auto it = normalized_forms_.find(id); it != normalized_forms_.end()) return &it->second;
  const AddedToken* token = find(id);
  return token == nullptr ? nullptr : &token->content;
}

size_t AddedVocabulary::count_new(const Vocab& model_vocab) const {
  return static_cast<size_t>(std::count_if(
      ids_.begin(), ids_.end(), [&](const auto& entry) { return !model_vocab.find(entry.first); }));
}

}  // namespace canrun
