#include "jinja/lexer.h"

#include <cctype>
#include <cstdint>

#include "jinja/template_error.h"
#include "tokenizer/unicode.h"

namespace canrun::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void rstrip(std::string& text) {
  while (!text.empty() && is_space(text.back())) text.pop_back();
}

int count_newlines(std::string_view text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

[[noreturn]] void syntax_error(const std::string& message, int line) {
  throw TemplateError(TemplateError::Cause::kSyntax, message, line);
}

// Python's unicode-escape decoding of a string literal's body, which is what Jinja2 applies.
std::string unescape(std::string_view body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    const auto hex = [&](size_t digits) {
      uint32_t value = 0;
      for (size_t k = 1; k <= digits; ++k) {
        const char h = i + k < body.size() ? body[i + k] : 'g';
        if (!std::isxdigit(static_cast<unsigned char>(h))) syntax_error("malformed \\x/\\u escape in a string", line);
        value = value * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
      }
      i += digits;
      unicode::append_utf8(out, value);
    };
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\n': break;  // a line continuation
      case 'x': hex(2); break;
      case 'u': hex(4); break;
      case 'U': hex(8); break;
      default:
        if (c >= '0' && c <= '7') {
          uint32_t value = 0;
          size_t k = 0;
          while (k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7')
            value = value * 8 + static_cast<uint32_t>(body[i + k++] - '0');
          i += k - 1;
          unicode::append_utf8(out, value);
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : source_(std::move(source)) {}

  std::vector<Token> run() {
    size_t pos = 0;
    while (pos < source_.size()) {
      const size_t start = next_tag(pos);
      std::string text = source_.substr(pos, start - pos);
      const int text_line = line_;
      line_ += count_newlines(text);
      if (start == source_.size()) {
        emit(TokenType::kText, std::move(text), text_line);
        break;
      }
      const char kind = source_[start + 1];
      size_t inner = start + 2;
      const char modifier = inner < source_.size() ? source_[inner] : '\0';
      if (modifier == '-') {
        rstrip(text);
      } else if (modifier != '+' && kind != '{') {
        lstrip_line(text);
      }
      if (modifier == '-' || modifier == '+') ++inner;
      emit(TokenType::kText, std::move(text), text_line);
      pos = kind == '#' ? comment(inner) : tag(kind, inner);
    }
    tokens_.push_back({TokenType::kEnd, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t next_tag(size_t pos) const {
    for (size_t i = pos; i + 1 < source_.size(); ++i)
      if (source_[i] == '{' && (source_[i + 1] == '{' || source_[i + 1] == '%' || source_[i + 1] == '#')) return i;
    return source_.size();
  }

  void emit(TokenType type, std::string text, int line) {
    if (type == TokenType::kText && text.empty()) return;
    tokens_.push_back({type, std::move(text), line});
  }

  // lstrip_blocks: spaces and tabs between the line's start and a block or comment tag go.
  void lstrip_line(std::string& text) const {
    const size_t newline = text.rfind('\n');
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    if (line_start == 0 && !line_starting_) return;
    for (size_t i = line_start; i < text.size(); ++i)
      if (!is_space(text[i])) return;
    text.resize(line_start);
  }

  // After a tag's end: `-` eats all whitespace, trim_blocks one newline (blocks and comments).
  size_t after_tag_end(size_t pos, char modifier, bool trims) {
    const size_t start = pos;
    if (modifier == '-') {
      while (pos < source_.size() && is_space(source_[pos])) ++pos;
    } else if (modifier != '+' && trims && pos < source_.size() && source_[pos] == '\n') {
      ++pos;
    }
    line_ += count_newlines(std::string_view(source_).substr(start, pos - start));
    line_starting_ = pos > 0 && source_[pos - 1] == '\n';
    return pos;
  }

  size_t comment(size_t pos) {
    const int line = line_;
    const size_t end = source_.find("#}", pos);
    if (end == std::string::npos) syntax_error("a comment {# ... is never closed", line);
    line_ += count_newlines(std::string_view(source_).substr(pos, end - pos));
    const char modifier = end > pos && (source_[end - 1] == '-' || source_[end - 1] == '+') ? source_[end - 1] : '\0';
    return after_tag_end(end + 2, modifier, true);
  }

  size_t tag(char kind, size_t pos) {
    const bool block = kind == '%';
    emit(block ? TokenType::kBlockBegin : TokenType::kVariableBegin, block ? "{%" : "{{", line_);
    const int opened_at = line_;
    int depth = 0;
    while (true) {
      while (pos < source_.size() && is_space(source_[pos])) line_ += source_[pos++] == '\n';
      if (pos >= source_.size())
        syntax_error(std::string("a tag ") + (block ? "{%" : "{{") + " is never closed", opened_at);
      const std::string_view rest = std::string_view(source_).substr(pos);
      if (depth == 0) {
        const std::string_view close = block ? "%}" : "}}";
        for (char modifier : {'-', '+', '\0'}) {
          if (modifier == '+' && !block) continue;
          const std::string end = modifier ? std::string(1, modifier) + std::string(close) : std::string(close);
          if (rest.substr(0, end.size()) == end) {
            emit(block ? TokenType::kBlockEnd : TokenType::kVariableEnd, std::string(close), line_);
            return after_tag_end(pos + end.size(), modifier, block);
          }
        }
      }
      pos = expression_token(pos, depth);
    }
  }

  size_t expression_token(size_t pos, int& depth) {
    const char c = source_[pos];
    const int line = line_;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos;
      while (end < source_.size() && (std::isalnum(static_cast<unsigned char>(source_[end])) || source_[end] == '_')) ++end;
      emit(TokenType::kName, source_.substr(pos, end - pos), line);
      return end;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return number(pos);
    if (c == '\'' || c == '"') {
      size_t end = pos + 1;
      while (end < source_.size() && source_[end] != c) end += source_[end] == '\\' ? 2 : 1;
      if (end >= source_.size()) syntax_error("a string literal is never closed", line);
      const std::string_view body = std::string_view(source_).substr(pos + 1, end - pos - 1);
      line_ += count_newlines(body);
      emit(TokenType::kString, unescape(body, line), line);
      return end + 1;
    }
    static const char* const kLong[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kLong)
      if (source_.compare(pos, 2, op) == 0) {
        emit(TokenType::kOperator, op, line);
        return pos + 2;
      }
    if (std::string_view("+-*/%~<>=.,:|()[]{}").find(c) == std::string_view::npos)
      syntax_error(std::string("unexpected character '") + c + "' in a tag", line);
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    emit(TokenType::kOperator, std::string(1, c), line);
    return pos + 1;
  }

  size_t number(size_t pos) {
    const auto digits = [&](size_t p) {
      while (p < source_.size() && (std::isdigit(static_cast<unsigned char>(source_[p])) || source_[p] == '_')) ++p;
      return p;
    };
    size_t end = digits(pos);
    bool is_float = false;
    // `x.0` is an attribute, so a float needs no dot before it.
    const bool after_dot = pos > 0 && source_[pos - 1] == '.';
    if (!after_dot && end + 1 < source_.size() && source_[end] == '.' &&
        std::isdigit(static_cast<unsigned char>(source_[end + 1]))) {
      end = digits(end + 1);
      is_float = true;
    }
    if (!after_dot && end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      size_t exponent = end + 1;
      if (exponent < source_.size() && (source_[exponent] == '+' || source_[exponent] == '-')) ++exponent;
      if (exponent < source_.size() && std::isdigit(static_cast<unsigned char>(source_[exponent]))) {
        end = digits(exponent);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = pos; i < end; ++i)
      if (source_[i] != '_') text += source_[i];
    emit(is_float ? TokenType::kFloat : TokenType::kInteger, std::move(text), line_);
    return end;
  }

  std::string source_;
  std::vector<Token> tokens_;
  int line_ = 1;
  bool line_starting_ = true;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  std::string normalized;
  normalized.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      normalized += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      normalized += source[i];
    }
  }
  if (!normalized.empty() && normalized.back() == '\n') normalized.pop_back();
  return Lexer(std::move(normalized)).run();
}

}  // namespace canrun::jinja
