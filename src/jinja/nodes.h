// The parsed template: expression and statement nodes, each knowing its line. The parser
// (parser.cpp) builds them; the interpreter (interpreter.cpp) defines eval() and render().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace canrun::jinja {

class Interpreter;

struct Expr {
  explicit Expr(int line_) : line(line_) {}
  virtual ~Expr() = default;
  virtual Value eval(Interpreter& in) const = 0;
  int line;
};
using ExprPtr = std::unique_ptr<Expr>;

struct CallArguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> named;
};

struct Literal : Expr {
  Literal(int line, Value v) : Expr(line), value(std::move(v)) {}
  Value eval(Interpreter& in) const override;
  Value value;
};

struct Name : Expr {
  Name(int line, std::string n) : Expr(line), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  std::string name;
};

struct ListLiteral : Expr {
  ListLiteral(int line, std::vector<ExprPtr> i, bool t) : Expr(line), items(std::move(i)), tuple(t) {}
  Value eval(Interpreter& in) const override;
  std::vector<ExprPtr> items;
  bool tuple;
};

struct DictLiteral : Expr {
  explicit DictLiteral(int line) : Expr(line) {}
  Value eval(Interpreter& in) const override;
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

struct Attribute : Expr {
  Attribute(int line, ExprPtr o, std::string n) : Expr(line), object(std::move(o)), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr object;
  std::string name;
};

struct Subscript : Expr {
  Subscript(int line, ExprPtr o, ExprPtr i) : Expr(line), object(std::move(o)), index(std::move(i)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr object, index;
};

struct Slice : Expr {
  Slice(int line, ExprPtr o) : Expr(line), object(std::move(o)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr object, start, stop, step;  // any but object may be null
};

struct Call : Expr {
  Call(int line, ExprPtr c) : Expr(line), callee(std::move(c)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr callee;
  CallArguments arguments;
};

// value | name(arguments); a filter block's chain has no value (it filters the block's text).
struct Filter : Expr {
  Filter(int line, ExprPtr v, std::string n) : Expr(line), value(std::move(v)), name(std::move(n)) {}
  Value eval(Interpreter& in) const override;
  Value apply(Interpreter& in, Value input) const;
  ExprPtr value;
  std::string name;
  CallArguments arguments;
};

struct Test : Expr {
  Test(int line, ExprPtr v, std::string n, bool neg) : Expr(line), value(std::move(v)), name(std::move(n)), negated(neg) {}
  Value eval(Interpreter& in) const override;
  ExprPtr value;
  std::string name;
  bool negated;
  CallArguments arguments;
};

struct Unary : Expr {
  Unary(int line, std::string o, ExprPtr e) : Expr(line), op(std::move(o)), operand(std::move(e)) {}
  Value eval(Interpreter& in) const override;
  std::string op;  // not, -, +
  ExprPtr operand;
};

struct Binary : Expr {
  Binary(int line, std::string o, ExprPtr l, ExprPtr r) : Expr(line), op(std::move(o)), left(std::move(l)), right(std::move(r)) {}
  Value eval(Interpreter& in) const override;
  std::string op;  // + - * / // % ** ~ == != < > <= >= in notin and or
  ExprPtr left, right;
};

struct Conditional : Expr {
  Conditional(int line, ExprPtr c, ExprPtr t, ExprPtr e) : Expr(line), condition(std::move(c)), then(std::move(t)), otherwise(std::move(e)) {}
  Value eval(Interpreter& in) const override;
  ExprPtr condition, then, otherwise;  // otherwise may be null: undefined
};

struct Stmt {
  explicit Stmt(int line_) : line(line_) {}
  virtual ~Stmt() = default;
  virtual void render(Interpreter& in, std::string& out) const = 0;
  int line;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextOutput : Stmt {
  TextOutput(int line, std::string t) : Stmt(line), text(std::move(t)) {}
  void render(Interpreter& in, std::string& out) const override;
  std::string text;
};

struct PrintOutput : Stmt {
  PrintOutput(int line, ExprPtr e) : Stmt(line), expr(std::move(e)) {}
  void render(Interpreter& in, std::string& out) const override;
  ExprPtr expr;
};

struct If : Stmt {
  explicit If(int line) : Stmt(line) {}
  void render(Interpreter& in, std::string& out) const override;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body otherwise;
};

struct For : Stmt {
  explicit For(int line) : Stmt(line) {}
  void render(Interpreter& in, std::string& out) const override;
  std::vector<std::string> targets;  // more than one: each item is unpacked
  ExprPtr iterable;
  ExprPtr filter;  // for x in xs if filter
  Body body, otherwise;
};

// set name = value; set a, b = value; set ns.attr = value; or the block form (value null).
struct Set : Stmt {
  explicit Set(int line) : Stmt(line) {}
  void render(Interpreter& in, std::string& out) const override;
  std::vector<std::string> targets;
  std::string attribute;  // set targets[0].attribute = ...
  ExprPtr value;
  Body body;
  std::vector<std::unique_ptr<Filter>> filters;  // block form: {% set x | filter %}
};

struct Macro : Stmt {
  explicit Macro(int line) : Stmt(line) {}
  void render(Interpreter& in, std::string& out) const override;
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> parameters;  // default may be null
  Body body;
};

struct FilterBlock : Stmt {
  explicit FilterBlock(int line) : Stmt(line) {}
  void render(Interpreter& in, std::string& out) const override;
  std::vector<std::unique_ptr<Filter>> filters;
  Body body;
};

// transformers' {% generation %} marks assistant text; rendering is the body's.
struct Group : Stmt {
  explicit Group(int line) : Stmt(line) {}
  void render(Interpreter& in, std::string& out) const override;
  Body body;
};

struct LoopControl : Stmt {
  LoopControl(int line, bool b) : Stmt(line), is_break(b) {}
  void render(Interpreter& in, std::string& out) const override;
  bool is_break;
};

}  // namespace canrun::jinja
