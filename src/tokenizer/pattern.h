// What normalizers and pre-tokenizers split or replace on: a regex, a literal
// string or a character class.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/regex.h"

namespace canrun {

struct PatternMatch {
  size_t begin;
  size_t end;
  bool is_match;
};

class Pattern {
 public:
  virtual ~Pattern() = default;
  // Consecutive byte ranges covering all of `text`, each flagged as a match or not.
  virtual std::vector<PatternMatch> find_matches(std::string_view text) const = 0;
};

class RegexPattern : public Pattern {
 public:
  explicit RegexPattern(Regex regex) : regex_(std::move(regex)) {}
  std::vector<PatternMatch> find_matches(std::string_view text) const override;

 private:
  Regex regex_;
};

class LiteralPattern : public Pattern {
 public:
  explicit LiteralPattern(std::string literal) : literal_(std::move(literal)) {}
  std::vector<PatternMatch> find_matches(std::string_view text) const override;

 private:
  std::string literal_;
};

// Every character for which the predicate holds is a match of its own.
class CharPattern : public Pattern {
 public:
  explicit CharPattern(std::function<bool(char32_t)> predicate) : predicate_(std::move(predicate)) {}
  std::vector<PatternMatch> find_matches(std::string_view text) const override;

 private:
  std::function<bool(char32_t)> predicate_;
};

// Swaps what counts as a match, as Split's `invert` does.
class InvertedPattern : public Pattern {
 public:
  explicit InvertedPattern(std::shared_ptr<const Pattern> inner) : inner_(std::move(inner)) {}
  std::vector<PatternMatch> find_matches(std::string_view text) const override;

 private:
  std::shared_ptr<const Pattern> inner_;
};

// A {"String": ...} or {"Regex": ...} pattern from tokenizer.json.
std::shared_ptr<const Pattern> parse_pattern(const JsonField& field);

}  // namespace canrun
