#include "jinja/interpreter.h"

#include <stdexcept>

#include "jinja/bounds.h"
#include "jinja/builtins.h"
#include "jinja/template_error.h"

namespace canrun::jinja {

Interpreter::Interpreter(std::vector<std::pair<std::string, Value>> variables)
    : scope_(std::make_shared<Scope>(Scope{std::move(variables), nullptr})) {}

Interpreter::Opened::Opened(Interpreter& in, std::shared_ptr<Scope> parent) : in_(in), saved_(in.scope_) {
  in.scope_ = std::make_shared<Scope>(Scope{{}, std::move(parent)});
}

Interpreter::Opened::~Opened() { in_.scope_ = saved_; }

Value Interpreter::lookup(const std::string& name) const {
  for (const Scope* scope = scope_.get(); scope; scope = scope->parent.get())
    for (auto it = scope->names.rbegin(); it != scope->names.rend(); ++it)
      if (it->first == name) return it->second;
  return Value::undefined("'" + name + "' is undefined");
}

void Interpreter::assign(const std::string& name, Value value) {
  for (auto& [existing, slot] : scope_->names)
    if (existing == name) {
      slot = std::move(value);
      return;
    }
  scope_->names.emplace_back(name, std::move(value));
}

void Interpreter::fail(int line, const std::string& message) const {
  throw TemplateError(TemplateError::Cause::kRender, message, line);
}

void Interpreter::count_iteration(int line) {
  if (++loop_iterations_ > kMaxLoopIterations)
    fail(line, "the template loops more than " + std::to_string(kMaxLoopIterations) + " times in one render");
}

Arguments Interpreter::evaluate(const CallArguments& arguments) {
  Arguments out;
  for (const ExprPtr& expr : arguments.positional) out.positional.push_back(expr->eval(*this));
  for (const auto& [name, expr] : arguments.named) out.named.emplace_back(name, expr->eval(*this));
  return out;
}

Value Interpreter::call(const Value& callee, Arguments& arguments, int line) {
  if (callee.is_undefined()) fail(line, callee.undefined_what());
  if (!callee.is_callable()) fail(line, "'" + callee.type_name() + "' object is not callable");
  return callee.callable().call(arguments);
}

void Interpreter::render(const Body& body, std::string& out) {
  for (const StmtPtr& stmt : body) {
    try {
      stmt->render(*this, out);
    } catch (const TemplateError&) {
      throw;
    } catch (const std::exception& error) {
      fail(stmt->line, error.what());
    }
    if (flow != Flow::kNormal) return;
  }
}

namespace {

// An expression's failure names its own line, even inside a statement spanning several.
template <typename F>
Value at_line(const Interpreter& in, int line, F&& f) {
  try {
    return f();
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& error) {
    in.fail(line, error.what());
  }
}

Value undefined_guard(const Interpreter& in, int line, Value value) {
  if (value.is_undefined()) in.fail(line, value.undefined_what());
  return value;
}

}  // namespace

Value Literal::eval(Interpreter&) const { return value; }

Value Name::eval(Interpreter& in) const { return in.lookup(name); }

Value ListLiteral::eval(Interpreter& in) const {
  std::vector<Value> values;
  for (const ExprPtr& item : items) values.push_back(item->eval(in));
  return Value::list(std::move(values), tuple);
}

Value DictLiteral::eval(Interpreter& in) const {
  Value dict = Value::dict();
  for (const auto& [key, value] : items) {
    const Value k = key->eval(in);
    if (k.is_list() || k.is_dict() || k.is_undefined() || k.is_callable())
      in.fail(line, "unhashable type: '" + k.type_name() + "'");
    dict.dict_data().set(k, value->eval(in));
  }
  return dict;
}

Value Attribute::eval(Interpreter& in) const {
  const Value target = undefined_guard(in, line, object->eval(in));
  return at_line(in, line, [&] { return attribute_of(target, name); });
}

Value Subscript::eval(Interpreter& in) const {
  const Value target = undefined_guard(in, line, object->eval(in));
  const Value key = index->eval(in);
  return at_line(in, line, [&] { return item_of(target, key); });
}

Value Slice::eval(Interpreter& in) const {
  const Value target = undefined_guard(in, line, object->eval(in));
  const auto bound = [&](const ExprPtr& expr) { return expr ? expr->eval(in) : Value::none(); };
  const Value a = bound(start), b = bound(stop), c = bound(step);
  return at_line(in, line, [&] { return slice_of(target, a, b, c); });
}

Value Call::eval(Interpreter& in) const {
  const Value target = callee->eval(in);
  Arguments values = in.evaluate(arguments);
  return at_line(in, line, [&] { return in.call(target, values, line); });
}

Value Filter::eval(Interpreter& in) const { return apply(in, value->eval(in)); }

Value Filter::apply(Interpreter& in, Value input) const {
  Arguments values = in.evaluate(arguments);
  return at_line(in, line, [&] { return apply_filter(in, name, input, values); });
}

Value Test::eval(Interpreter& in) const {
  const Value input = value->eval(in);
  Arguments values = in.evaluate(arguments);
  return at_line(in, line, [&] { return Value(apply_test(in, name, input, values) != negated); });
}

Value Unary::eval(Interpreter& in) const {
  const Value v = operand->eval(in);
  if (op == "not") return Value(!v.truthy());
  undefined_guard(in, line, v);
  if (!v.is_number()) in.fail(line, "bad operand type for unary " + op + ": '" + v.type_name() + "'");
  if (op == "+") return v.kind() == Value::Kind::kFloat ? v : Value(v.as_int());
  if (v.kind() == Value::Kind::kFloat) return Value(-v.as_double());
  return at_line(in, line, [&] { return arithmetic("-", Value(0), Value(v.as_int())); });  // -(-2**63) overflows
}

Value Binary::eval(Interpreter& in) const {
  if (op == "and") {
    Value l = left->eval(in);
    return l.truthy() ? right->eval(in) : l;
  }
  if (op == "or") {
    Value l = left->eval(in);
    return l.truthy() ? l : right->eval(in);
  }
  const Value l = left->eval(in);
  const Value r = right->eval(in);
  return at_line(in, line, [&]() -> Value {
    if (op == "~") {
      std::string joined = to_str(l);
      append_bounded(joined, to_str(r));
      return Value(std::move(joined));
    }
    if (op == "==") return Value(equals(l, r));
    if (op == "!=") return Value(!equals(l, r));
    if (op == "in") return Value(contains(r, l));
    if (op == "notin") return Value(!contains(r, l));
    for (const Value* v : {&l, &r})
      if (v->is_undefined()) throw std::invalid_argument(v->undefined_what());
    if (op == "<") return Value(less_than(l, r));
    if (op == ">") return Value(less_than(r, l));
    if (op == "<=") return Value(!less_than(r, l));
    if (op == ">=") return Value(!less_than(l, r));
    return arithmetic(op, l, r);
  });
}

Value Conditional::eval(Interpreter& in) const {
  if (condition->eval(in).truthy()) return then->eval(in);
  return otherwise ? otherwise->eval(in) : Value::undefined("the condition was false and there is no else");
}

// Output is a string like any other: bounded by kMaxStringBytes before it grows.
void TextOutput::render(Interpreter&, std::string& out) const { append_bounded(out, text); }

void PrintOutput::render(Interpreter& in, std::string& out) const { append_bounded(out, to_str(expr->eval(in))); }

void If::render(Interpreter& in, std::string& out) const {
  for (const auto& [condition, body] : branches)
    if (condition->eval(in).truthy()) {
      in.render(body, out);
      return;
    }
  in.render(otherwise, out);
}

void For::render(Interpreter& in, std::string& out) const {
  const Value source = iterable->eval(in);
  if (!source.is_undefined() && !source.is_string() && !source.is_list() && !source.is_dict())
    in.fail(line, "'" + source.type_name() + "' object is not iterable");
  const std::vector<Value> all = iterate(source);
  const std::shared_ptr<Interpreter::Scope> outside = in.scope();
  const auto bind = [&](const Value& item) {
    if (targets.size() == 1) {
      in.assign(targets[0], item);
      return;
    }
    const std::vector<Value> parts = iterate(item);
    if (parts.size() != targets.size())
      in.fail(line, "cannot unpack " + std::to_string(parts.size()) + " values into " +
                        std::to_string(targets.size()) + " loop variables");
    for (size_t i = 0; i < targets.size(); ++i) in.assign(targets[i], parts[i]);
  };
  std::vector<Value> items;
  if (filter) {
    for (const Value& item : all) {
      in.count_iteration(line);
      Interpreter::Opened scope(in, outside);
      bind(item);
      if (filter->eval(in).truthy()) items.push_back(item);
    }
  } else {
    items = all;
  }
  if (items.empty()) {
    in.render(otherwise, out);
    return;
  }
  const int64_t length = static_cast<int64_t>(items.size());
  ++in.loop_depth;
  for (int64_t i = 0; i < length; ++i) {
    in.count_iteration(line);
    Interpreter::Opened scope(in, outside);
    const Value& item = items[static_cast<size_t>(i)];
    Value loop = Value::dict({{"index", Value(i + 1)},
                              {"index0", Value(i)},
                              {"revindex", Value(length - i)},
                              {"revindex0", Value(length - i - 1)},
                              {"first", Value(i == 0)},
                              {"last", Value(i == length - 1)},
                              {"length", Value(length)},
                              {"depth", Value(1)},
                              {"depth0", Value(0)}});
    if (i > 0) loop.dict_data().set("previtem", items[static_cast<size_t>(i - 1)]);
    if (i + 1 < length) loop.dict_data().set("nextitem", items[static_cast<size_t>(i + 1)]);
    loop.dict_data().set("cycle", Value::function("loop.cycle", [i](Arguments& args) {
      if (args.positional.empty()) throw std::invalid_argument("no items for cycling given");
      return args.positional[static_cast<size_t>(i) % args.positional.size()];
    }));
    in.assign("loop", std::move(loop));
    bind(item);
    in.render(body, out);
    const Interpreter::Flow flow = in.flow;
    in.flow = Interpreter::Flow::kNormal;
    if (flow == Interpreter::Flow::kBreak) break;
  }
  --in.loop_depth;
}

void Set::render(Interpreter& in, std::string& out) const {
  (void)out;
  Value result;
  if (value) {
    result = value->eval(in);
  } else {
    std::string text;
    in.render(body, text);
    result = Value(std::move(text));
    for (const auto& filter : filters) result = filter->apply(in, result);
  }
  if (!attribute.empty()) {
    const Value target = in.lookup(targets[0]);
    if (!target.is_dict() || !target.dict_data().namespace_object)
      in.fail(line, "cannot assign attribute on non-namespace object '" + targets[0] + "'");
    if (attribute.front() == '_')
      in.fail(line, "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" + attribute +
                        "'. Please rename the attribute.");
    target.dict_data().set(attribute, std::move(result));
    return;
  }
  if (targets.size() == 1) {
    in.assign(targets[0], std::move(result));
    return;
  }
  const std::vector<Value> parts = iterate(result);
  if (parts.size() != targets.size())
    in.fail(line, "cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(targets.size()) + " names");
  for (size_t i = 0; i < targets.size(); ++i) in.assign(targets[i], parts[i]);
}

void Macro::render(Interpreter& in, std::string&) const {
  // Weak: the macro lives in the scope it was defined in, and a strong reference would be a cycle.
  const std::weak_ptr<Interpreter::Scope> defined_in = in.scope();
  const Macro* self = this;
  Interpreter* interpreter = &in;
  in.assign(name, Value::function(name, [self, defined_in, interpreter](Arguments& args) {
    Interpreter& run = *interpreter;
    constexpr int kMaxMacroDepth = 256;
    if (run.macro_depth >= kMaxMacroDepth)
      throw std::invalid_argument("macro '" + self->name + "' recurses deeper than " + std::to_string(kMaxMacroDepth) + " calls");
    struct Depth {
      int& depth;
      explicit Depth(int& d) : depth(++d) {}
      ~Depth() { --depth; }
    } depth(run.macro_depth);
    if (args.positional.size() > self->parameters.size())
      throw std::invalid_argument("macro '" + self->name + "' takes not more than " +
                                  std::to_string(self->parameters.size()) + " argument(s)");
    std::shared_ptr<Interpreter::Scope> parent = defined_in.lock();
    if (!parent) throw std::invalid_argument("macro '" + self->name + "' is called after the scope it was defined in ended");
    Interpreter::Opened scope(run, std::move(parent));
    for (const auto& [given, value] : args.named) {
      bool known = false;
      for (const auto& parameter : self->parameters) known = known || parameter.first == given;
      if (!known) throw std::invalid_argument("macro '" + self->name + "' takes no keyword argument '" + given + "'");
    }
    for (size_t i = 0; i < self->parameters.size(); ++i) {
      const auto& [parameter, default_value] = self->parameters[i];
      Value bound = Value::undefined("'" + parameter + "' is undefined");
      if (i < args.positional.size()) {
        bound = args.positional[i];
      } else {
        bool named = false;
        for (const auto& [given, value] : args.named)
          if (given == parameter) {
            bound = value;
            named = true;
          }
        if (!named && default_value) bound = default_value->eval(run);
      }
      run.assign(parameter, std::move(bound));
    }
    std::string text;
    const int loops = run.loop_depth;
    run.loop_depth = 0;
    run.render(self->body, text);
    run.loop_depth = loops;
    run.flow = Interpreter::Flow::kNormal;
    return Value(std::move(text));
  }));
}

void FilterBlock::render(Interpreter& in, std::string& out) const {
  std::string text;
  in.render(body, text);
  Value result(std::move(text));
  for (const auto& filter : filters) result = filter->apply(in, result);
  append_bounded(out, to_str(result));
}

void Group::render(Interpreter& in, std::string& out) const { in.render(body, out); }

void LoopControl::render(Interpreter& in, std::string&) const {
  if (in.loop_depth == 0) in.fail(line, std::string(is_break ? "break" : "continue") + " outside a for loop");
  in.flow = is_break ? Interpreter::Flow::kBreak : Interpreter::Flow::kContinue;
}

}  // namespace canrun::jinja
