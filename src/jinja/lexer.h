// Splits a template into text and the tokens inside its tags, with the whitespace control of
// the environment transformers renders chat templates in: trim_blocks (a block or comment tag
// eats the newline after it), lstrip_blocks (spaces before a block or comment tag on its own
// line go), `-` and `+` on a tag, and one trailing newline of the template dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace canrun::jinja {

enum class TokenType {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,   // text holds the value, escapes resolved
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type;
  std::string text;
  int line;
};

// Throws TemplateError naming the line for an unterminated tag, string or comment.
std::vector<Token> tokenize(std::string_view source);

}  // namespace canrun::jinja
