#include "jinja/parser.h"

#include <initializer_list>

#include "jinja/lexer.h"
#include "jinja/template_error.h"

namespace canrun::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse_template() {
    Body body = parse_body({});
    if (peek().type != TokenType::kEnd) error("unexpected '" + peek().text + "'");
    return body;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  [[noreturn]] void error(const std::string& message) const {
    throw TemplateError(TemplateError::Cause::kSyntax, message, peek().line);
  }

  bool at_operator(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::kOperator && peek(ahead).text == op;
  }
  bool at_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::kName && peek(ahead).text == name;
  }
  bool skip_operator(std::string_view op) {
    if (!at_operator(op)) return false;
    ++pos_;
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!at_name(name)) return false;
    ++pos_;
    return true;
  }
  void expect_operator(std::string_view op) {
    if (!skip_operator(op)) error("expected '" + std::string(op) + "', got '" + peek().text + "'");
  }
  std::string expect_name() {
    if (peek().type != TokenType::kName) error("expected a name, got '" + peek().text + "'");
    return next().text;
  }
  void expect_block_end() {
    if (peek().type != TokenType::kBlockEnd) error("expected the end of the tag '%}', got '" + peek().text + "'");
    ++pos_;
  }

  // Statements until a block tag named in `stop`; leaves the position at that tag's name.
  Body parse_body(std::initializer_list<std::string_view> stop) {
    Body body;
    while (true) {
      const Token& token = peek();
      switch (token.type) {
        case TokenType::kText:
          body.push_back(std::make_unique<TextOutput>(token.line, token.text));
          ++pos_;
          break;
        case TokenType::kVariableBegin: {
          ++pos_;
          ExprPtr expr = parse_expression();
          if (peek().type != TokenType::kVariableEnd) error("expected '}}', got '" + peek().text + "'");
          ++pos_;
          body.push_back(std::make_unique<PrintOutput>(token.line, std::move(expr)));
          break;
        }
        case TokenType::kBlockBegin: {
          for (std::string_view name : stop)
            if (at_name(name, 1)) {
              ++pos_;
              return body;
            }
          ++pos_;
          body.push_back(parse_statement());
          break;
        }
        case TokenType::kEnd:
          if (stop.size() != 0) {
            std::string expected;
            for (std::string_view name : stop) expected += (expected.empty() ? "'" : " or '") + std::string(name) + "'";
            error("the template ends before " + expected);
          }
          return body;
        default: error("unexpected '" + token.text + "'");
      }
    }
  }

  // After the block's closing name: `{% endfor %}`.
  void close(std::string_view end_name) {
    if (!skip_name(end_name)) error("expected '" + std::string(end_name) + "'");
    if (end_name == "endmacro" && peek().type == TokenType::kName) ++pos_;
    expect_block_end();
  }

  StmtPtr parse_statement() {
    const Depth depth(*this);
    const int line = peek().line;
    const std::string keyword = expect_name();
    if (keyword == "if") return parse_if(line);
    if (keyword == "for") return parse_for(line);
    if (keyword == "set") return parse_set(line);
    if (keyword == "macro") return parse_macro(line);
    if (keyword == "filter") {
      auto block = std::make_unique<FilterBlock>(line);
      do block->filters.push_back(parse_filter(nullptr));
      while (skip_operator("|"));
      expect_block_end();
      block->body = parse_body({"endfilter"});
      close("endfilter");
      return block;
    }
    if (keyword == "generation") {
      expect_block_end();
      auto group = std::make_unique<Group>(line);
      group->body = parse_body({"endgeneration"});
      close("endgeneration");
      return group;
    }
    if (keyword == "break" || keyword == "continue") {
      expect_block_end();
      return std::make_unique<LoopControl>(line, keyword == "break");
    }
    --pos_;
    error("the tag '" + keyword + "' is not supported in chat templates");
  }

  StmtPtr parse_if(int line) {
    auto node = std::make_unique<If>(line);
    ExprPtr condition = parse_expression();
    while (true) {
      expect_block_end();
      Body body = parse_body({"elif", "else", "endif"});
      node->branches.emplace_back(std::move(condition), std::move(body));
      if (skip_name("elif")) {
        condition = parse_expression();
        continue;
      }
      if (skip_name("else")) {
        expect_block_end();
        node->otherwise = parse_body({"endif"});
      }
      close("endif");
      return node;
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> targets;
    const bool parenthesized = skip_operator("(");
    do targets.push_back(expect_name());
    while (skip_operator(","));
    if (parenthesized) expect_operator(")");
    return targets;
  }

  StmtPtr parse_for(int line) {
    auto node = std::make_unique<For>(line);
    node->targets = parse_targets();
    if (!skip_name("in")) error("expected 'in' in a for loop");
    node->iterable = parse_tuple(false);
    if (skip_name("if")) node->filter = parse_expression();
    if (at_name("recursive")) error("recursive for loops are not supported in chat templates");
    expect_block_end();
    node->body = parse_body({"else", "endfor"});
    if (skip_name("else")) {
      expect_block_end();
      node->otherwise = parse_body({"endfor"});
    }
    close("endfor");
    return node;
  }

  StmtPtr parse_set(int line) {
    auto node = std::make_unique<Set>(line);
    node->targets = parse_targets();
    if (node->targets.size() == 1 && skip_operator(".")) node->attribute = expect_name();
    if (skip_operator("=")) {
      node->value = parse_tuple(true);
      expect_block_end();
      return node;
    }
    if (node->targets.size() != 1 || !node->attribute.empty()) error("a block set takes one name");
    while (skip_operator("|")) node->filters.push_back(parse_filter(nullptr));
    expect_block_end();
    node->body = parse_body({"endset"});
    close("endset");
    return node;
  }

  StmtPtr parse_macro(int line) {
    auto node = std::make_unique<Macro>(line);
    node->name = expect_name();
    expect_operator("(");
    while (!skip_operator(")")) {
      if (!node->parameters.empty()) expect_operator(",");
      if (skip_operator(")")) break;
      std::string name = expect_name();
      ExprPtr default_value = skip_operator("=") ? parse_expression() : nullptr;
      node->parameters.emplace_back(std::move(name), std::move(default_value));
    }
    expect_block_end();
    node->body = parse_body({"endmacro"});
    close("endmacro");
    return node;
  }

  // An expression, or several separated by commas: a tuple (for-loop iterables, set values).
  ExprPtr parse_tuple(bool with_condition) {
    const int line = peek().line;
    ExprPtr first = with_condition ? parse_expression() : parse_or();
    if (!at_operator(",")) return first;
    std::vector<ExprPtr> items;
    items.push_back(std::move(first));
    while (skip_operator(",")) {
      if (peek().type == TokenType::kBlockEnd) break;
      items.push_back(with_condition ? parse_expression() : parse_or());
    }
    return std::make_unique<ListLiteral>(line, std::move(items), true);
  }

  ExprPtr parse_expression() {
    Depth depth(*this);
    ExprPtr expr = parse_or();
    while (at_name("if")) {
      depth.add();
      const int line = next().line;
      ExprPtr condition = parse_or();
      ExprPtr otherwise = skip_name("else") ? parse_expression() : nullptr;
      expr = std::make_unique<Conditional>(line, std::move(condition), std::move(expr), std::move(otherwise));
    }
    return expr;
  }

  ExprPtr parse_or() { return parse_binary({"or"}, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_binary({"and"}, &Parser::parse_not); }

  ExprPtr parse_not() {
    if (at_name("not")) {
      const Depth depth(*this);
      const int line = next().line;
      return std::make_unique<Unary>(line, "not", parse_not());
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    Depth depth(*this);
    ExprPtr left = parse_math1();
    while (true) {
      const int line = peek().line;
      std::string op;
      if (peek().type == TokenType::kOperator &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == ">" ||
           peek().text == "<=" || peek().text == ">=")) {
        op = next().text;
      } else if (skip_name("in")) {
        op = "in";
      } else if (at_name("not") && at_name("in", 1)) {
        pos_ += 2;
        op = "notin";
      } else {
        return left;
      }
      depth.add();
      left = std::make_unique<Binary>(line, op, std::move(left), parse_math1());
    }
  }

  // Left-associative operators, symbols (+, ~, **) or keywords (or, and).
  template <typename Operand>
  ExprPtr parse_binary(std::initializer_list<std::string_view> ops, Operand operand) {
    Depth depth(*this);
    ExprPtr left = (this->*operand)();
    while (true) {
      bool matched = false;
      for (std::string_view op : ops)
        if (at_operator(op) || at_name(op)) {
          depth.add();
          const int line = next().line;
          left = std::make_unique<Binary>(line, std::string(op), std::move(left), (this->*operand)());
          matched = true;
          break;
        }
      if (!matched) return left;
    }
  }

  ExprPtr parse_math1() { return parse_binary({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_binary({"~"}, &Parser::parse_math2); }
  ExprPtr parse_math2() { return parse_binary({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return parse_binary({"**"}, &Parser::parse_unary_filtered); }
  ExprPtr parse_unary_filtered() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filter) {
    const Depth depth(*this);
    const int line = peek().line;
    ExprPtr node;
    if (at_operator("-") || at_operator("+")) {
      const std::string op = next().text;
      node = std::make_unique<Unary>(line, op, parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& token = peek();
    const int line = token.line;
    switch (token.type) {
      case TokenType::kName: {
        ++pos_;
        const std::string& name = token.text;
        if (name == "true" || name == "True") return std::make_unique<Literal>(line, Value(true));
        if (name == "false" || name == "False") return std::make_unique<Literal>(line, Value(false));
        if (name == "none" || name == "None") return std::make_unique<Literal>(line, Value::none());
        return std::make_unique<Name>(line, name);
      }
      case TokenType::kString: {
        std::string text;
        while (peek().type == TokenType::kString) text += next().text;
        return std::make_unique<Literal>(line, Value(std::move(text)));
      }
      case TokenType::kInteger: ++pos_; return std::make_unique<Literal>(line, Value(static_cast<int64_t>(std::stoll(token.text))));
      case TokenType::kFloat: ++pos_; return std::make_unique<Literal>(line, Value(std::stod(token.text)));
      case TokenType::kOperator:
        if (skip_operator("(")) {
          if (skip_operator(")")) return std::make_unique<ListLiteral>(line, std::vector<ExprPtr>{}, true);
          std::vector<ExprPtr> items;
          items.push_back(parse_expression());
          bool tuple = false;
          while (skip_operator(",")) {
            tuple = true;
            if (at_operator(")")) break;
            items.push_back(parse_expression());
          }
          expect_operator(")");
          if (!tuple) return std::move(items.front());
          return std::make_unique<ListLiteral>(line, std::move(items), true);
        }
        if (skip_operator("[")) {
          std::vector<ExprPtr> items;
          while (!skip_operator("]")) {
            if (!items.empty()) expect_operator(",");
            if (skip_operator("]")) break;
            items.push_back(parse_expression());
          }
          return std::make_unique<ListLiteral>(line, std::move(items), false);
        }
        if (skip_operator("{")) {
          auto dict = std::make_unique<DictLiteral>(line);
          while (!skip_operator("}")) {
            if (!dict->items.empty()) expect_operator(",");
            if (skip_operator("}")) break;
            ExprPtr key = parse_expression();
            expect_operator(":");
            dict->items.emplace_back(std::move(key), parse_expression());
          }
          return dict;
        }
        break;
      default: break;
    }
    error("unexpected '" + token.text + "'");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    Depth depth(*this);
    while (true) {
      depth.add();
      const int line = peek().line;
      if (skip_operator(".")) {
        if (peek().type == TokenType::kInteger) {
          const int64_t index = std::stoll(next().text);
          node = std::make_unique<Subscript>(line, std::move(node), std::make_unique<Literal>(line, Value(index)));
        } else {
          node = std::make_unique<Attribute>(line, std::move(node), expect_name());
        }
      } else if (skip_operator("[")) {
        node = parse_subscript(line, std::move(node));
      } else if (at_operator("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(int line, ExprPtr object) {
    ExprPtr start = at_operator(":") ? nullptr : parse_expression();
    if (!skip_operator(":")) {
      expect_operator("]");
      return std::make_unique<Subscript>(line, std::move(object), std::move(start));
    }
    auto slice = std::make_unique<Slice>(line, std::move(object));
    slice->start = std::move(start);
    if (!at_operator(":") && !at_operator("]")) slice->stop = parse_expression();
    if (skip_operator(":") && !at_operator("]")) slice->step = parse_expression();
    expect_operator("]");
    return slice;
  }

  void parse_arguments(CallArguments& arguments) {
    expect_operator("(");
    bool first = true;
    while (!skip_operator(")")) {
      if (!first) expect_operator(",");
      first = false;
      if (skip_operator(")")) break;
      if (at_operator("*") || at_operator("**")) error("*args and **kwargs calls are not supported in chat templates");
      if (peek().type == TokenType::kName && at_operator("=", 1)) {
        std::string name = next().text;
        ++pos_;
        arguments.named.emplace_back(std::move(name), parse_expression());
      } else {
        if (!arguments.named.empty()) error("a positional argument follows a keyword argument");
        arguments.positional.push_back(parse_expression());
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto call = std::make_unique<Call>(peek().line, std::move(callee));
    parse_arguments(call->arguments);
    return call;
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    Depth depth(*this);
    while (true) {
      depth.add();
      if (skip_operator("|")) {
        node = parse_filter(std::move(node));
      } else if (at_name("is")) {
        node = parse_test(std::move(node));
      } else if (at_operator("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  std::unique_ptr<Filter> parse_filter(ExprPtr value) {
    const int line = peek().line;
    const std::string name = expect_name();
    auto filter = std::make_unique<Filter>(line, std::move(value), name);
    if (at_operator("(")) parse_arguments(filter->arguments);
    return filter;
  }

  ExprPtr parse_test(ExprPtr value) {
    const int line = next().line;  // is
    const bool negated = skip_name("not");
    const std::string name = expect_name();
    auto test = std::make_unique<Test>(line, std::move(value), name, negated);
    if (at_operator("(")) {
      parse_arguments(test->arguments);
    } else {
      const Token& token = peek();
      const bool argument_starts = token.type == TokenType::kString || token.type == TokenType::kInteger ||
                                   token.type == TokenType::kFloat || at_operator("[") || at_operator("{") ||
                                   (token.type == TokenType::kName && token.text != "else" && token.text != "or" &&
                                    token.text != "and" && token.text != "if");
      if (argument_starts) test->arguments.positional.push_back(parse_postfix(parse_primary()));
    }
    return test;
  }

  // A template is outside input: the depth of what it nests (blocks, brackets, chained
  // operators: each a level the interpreter recurses through) is bounded, so a hostile one is an
  // error rather than a stack overflow.
  static constexpr int kMaxDepth = 500;
  class Depth {
   public:
    explicit Depth(Parser& parser) : parser_(parser) { add(); }
    ~Depth() { parser_.depth_ -= added_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    void add() {
      ++added_;
      if (++parser_.depth_ > kMaxDepth) parser_.error("the template nests deeper than " + std::to_string(kMaxDepth) + " levels");
    }

   private:
    Parser& parser_;
    int added_ = 0;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse(std::string_view source) {
  try {
    return Parser(tokenize(source)).parse_template();
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& error) {  // a number literal out of range
    throw TemplateError(TemplateError::Cause::kSyntax, error.what(), 0);
  }
}

}  // namespace canrun::jinja
