// Jinja2's built-in filters and tests, the methods of Python's str, list and dict that
// templates call (the sandbox's immutable subset: list.append and dict.pop are refused, as
// transformers' ImmutableSandboxedEnvironment refuses them), and Jinja2's attribute and item
// lookup. Errors are std::invalid_argument with Python's or Jinja2's message.
#pragma once

#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jinja/value.h"

namespace canrun::jinja {

class Interpreter;

bool has_filter(std::string_view name);
bool has_test(std::string_view name);
Value apply_filter(Interpreter& in, const std::string& name, const Value& input, Arguments& arguments);
bool apply_test(Interpreter& in, const std::string& name, const Value& input, Arguments& arguments);

// Python iteration: a list's items, a dict's keys, a string's characters; Undefined is empty.
std::vector<Value> iterate(const Value& value);
// object.name: a bound method of the object's type, else the item `name` (Jinja2's getattr).
Value attribute_of(const Value& object, const std::string& name);
// object[key]: the item, else an attribute named by a string key (Jinja2's getitem).
Value item_of(const Value& object, const Value& key);
Value slice_of(const Value& object, const Value& start, const Value& stop, const Value& step);
bool contains(const Value& container, const Value& item);
// Python's str.strip() / lstrip() / rstrip() without arguments: Unicode whitespace.
std::string python_strip(const std::string& text, bool left, bool right);
// a % b for strings (printf-style), a + b and the rest of Python's arithmetic.
Value arithmetic(const std::string& op, const Value& a, const Value& b);

// The globals transformers gives chat templates: raise_exception, strftime_now (at `now`),
// namespace, dict and range.
std::vector<std::pair<std::string, Value>> template_globals(std::function<std::tm()> now);

}  // namespace canrun::jinja
