#include "tokenizer/pre_tokenized_string.h"

namespace canrun {

PreTokenizedString::PreTokenizedString(std::string text) {
  splits_.push_back({NormalizedString(std::move(text)), std::nullopt});
}

void PreTokenizedString::split_pieces(
    const std::function<std::vector<Split>(const NormalizedString&)>& split_fn) {
  std::vector<Split> result;
  result.reserve(splits_.size());
  for (Split& split : splits_) {
    if (split.tokens) {
      result.push_back(std::move(split));
      continue;
    }
    for (Split& piece : split_fn(split.normalized)) {
      if (!piece.normalized.empty()) result.push_back(std::move(piece));
    }
  }
  splits_ = std::move(result);
}

void PreTokenizedString::split(
    const std::function<std::vector<NormalizedString>(NormalizedString)>& split_fn) {
  split_pieces([&](const NormalizedString& normalized) {
    std::vector<Split> pieces;
    for (NormalizedString& piece : split_fn(normalized)) {
      pieces.push_back({std::move(piece), std::nullopt});
    }
    return pieces;
  });
}

void PreTokenizedString::normalize(const std::function<void(NormalizedString&)>& normalize_fn) {
  for (Split& split : splits_) {
    if (!split.tokens) normalize_fn(split.normalized);
  }
}

void PreTokenizedString::tokenize(const std::function<std::vector<Token>(std::string_view)>& tokenize_fn) {
  for (Split& split : splits_) {
    if (!split.tokens) split.tokens = tokenize_fn(split.normalized.get());
  }
}

std::vector<Token> PreTokenizedString::tokens() const {
  std::vector<Token> out;
  for (const Split& split : splits_) {
    if (split.tokens) out.insert(out.end(), split.tokens->begin(), split.tokens->end());
  }
  return out;
}

}  // namespace canrun
