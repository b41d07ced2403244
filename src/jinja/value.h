// The values a Jinja template computes with, with Python's semantics, because Hub chat templates
// are written against Jinja2 on CPython: lists and dicts are shared references (a namespace is
// mutated through any name for it), dicts keep insertion order, `1 == 1.0 == True`, and printing
// a value writes what Python's str() and repr() write. Strings are shared too, as Python's
// immutable str is: copying a list of them copies references, never text. During a render, each
// string and list made is counted against the bounds of jinja/bounds.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "util/json.h"

namespace canrun::jinja {

class Value;

// How deep lists and dicts may nest: printing, comparing and freeing a value recurse once per
// level, and a template could otherwise nest a list in itself a million times in a loop.
inline constexpr int kMaxValueNesting = 500;

struct ListData {
  std::vector<Value> items;
  bool tuple = false;  // printed (a, b); never equal to a list, as in Python
  // What Jinja2's map, select and their kin return: iterable, always true, but it has no length
  // and neither prints nor serialises.
  bool generator = false;
  int nesting = 1;  // 1 + the deepest item's
};

struct DictData {
  std::vector<std::pair<Value, Value>> items;  // in insertion order; keys are str, int, float, bool or None
  bool namespace_object = false;               // a namespace(): attributes may be assigned

  const Value* find(std::string_view key) const;
  const Value* find(const Value& key) const;  // Python's key equality: 1, 1.0 and True are one key
  // Throws std::invalid_argument past kMaxValueNesting.
  void set(const Value& key, Value value);
  int nesting = 1;  // 1 + the deepest value's; namespaces only grow (a cycle grows it at each set)
};

// Namespaces are the one thing a template can change after making it, and so the one way to a
// cycle ({% set ns.me = ns %}), which reference counting never frees. While one lives, every
// namespace made on this thread is kept, and all are emptied when it ends: a render's values do
// not outlive the render.
class NamespaceCollector {
 public:
  NamespaceCollector();
  ~NamespaceCollector();
  NamespaceCollector(const NamespaceCollector&) = delete;
  NamespaceCollector& operator=(const NamespaceCollector&) = delete;
  static void keep(const std::shared_ptr<DictData>& made);

 private:
  std::vector<std::shared_ptr<DictData>> made_;
  NamespaceCollector* outer_;
};

// Arguments of a call: positional, then keyword, in the order written.
struct Arguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};

struct Callable {
  std::string name;
  std::function<Value(Arguments&)> call;
};

// What a missing name or attribute evaluates to: prints as "", is false, iterates as empty;
// anything else done with it is an error that says what was missing.
struct Undefined {
  std::string what;  // "'x' is undefined", "'dict object' has no attribute 'y'"
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() : data_(Undefined{"value is undefined"}) {}
  static Value undefined(std::string what) { return Value(Data(Undefined{std::move(what)})); }
  static Value none() { return Value(Data(nullptr)); }
  // A string marked safe (|safe, |escape): `+` with a plain string HTML-escapes the plain one,
  // as markupsafe.Markup does.
  static Value markup(std::string s);
  bool is_markup() const { return markup_; }
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(static_cast<int64_t>(i)) {}
  Value(double f) : data_(f) {}
  Value(std::string s);
  Value(const char* s) : Value(std::string(s)) {}
  static Value list(std::vector<Value> items = {}, bool tuple = false);
  static Value dict(std::vector<std::pair<Value, Value>> items = {}, bool namespace_object = false);
  static Value function(std::string name, std::function<Value(Arguments&)> call);
  // JSON objects keep their member order (ordered_json), so a conversation reads as written.
  static Value from_json(const nlohmann::ordered_json& json);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_number() const { return kind() == Kind::kInt || kind() == Kind::kFloat || kind() == Kind::kBool; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_mapping() const { return is_dict() && !dict_data().namespace_object; }
  bool is_callable() const { return kind() == Kind::kCallable; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;  // bool or int
  double as_double() const;
  const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(data_); }
  const std::vector<Value>& items() const { return list_data().items; }
  ListData& list_data() const { return *std::get<std::shared_ptr<ListData>>(data_); }
  DictData& dict_data() const { return *std::get<std::shared_ptr<DictData>>(data_); }
  const Callable& callable() const { return *std::get<std::shared_ptr<Callable>>(data_); }
  const std::string& undefined_what() const { return std::get<Undefined>(data_).what; }

  bool truthy() const;
  // Python's type name, for messages: 'str', 'list', 'dict', 'NoneType', ...
  std::string type_name() const;

 private:
  using Data = std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::shared_ptr<const std::string>,
                            std::shared_ptr<ListData>, std::shared_ptr<DictData>, std::shared_ptr<Callable>>;
  explicit Value(Data data) : data_(std::move(data)) {}
  Data data_;
  bool markup_ = false;
};

// Python's ==, and the ordering of < for numbers and strings (false/error otherwise).
bool equals(const Value& a, const Value& b);
// Throws std::invalid_argument naming both types when Python would raise TypeError.
bool less_than(const Value& a, const Value& b);

// What {{ value }} prints: Python's str(), with Undefined as "".
std::string to_str(const Value& value);
// Python's repr(), as str() of a container writes its items.
std::string repr(const Value& value);
std::string float_repr(double value);

struct JsonOptions {
  std::string indent;  // empty: one line
  bool indented = false;
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// Python's json.dumps; throws std::invalid_argument for what it cannot serialise.
std::string to_json(const Value& value, const JsonOptions& options);

}  // namespace canrun::jinja
