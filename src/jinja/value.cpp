#include "jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "jinja/bounds.h"
#include "tokenizer/unicode.h"

namespace canrun::jinja {

const Value* DictData::find(std::string_view key) const {
  for (const auto& [name, value] : items)
    if (name.is_string() && name.as_string() == key) return &value;
  return nullptr;
}

const Value* DictData::find(const Value& key) const {
  for (const auto& [name, value] : items)
    if (equals(name, key)) return &value;
  return nullptr;
}

namespace {

int nesting_of(const Value& value) {
  if (value.is_list()) return value.list_data().nesting;
  if (value.is_dict()) return value.dict_data().nesting;
  return 0;
}

int checked_nesting(int nesting) {
  if (nesting > kMaxValueNesting)
    throw std::invalid_argument("lists and dicts nest deeper than " + std::to_string(kMaxValueNesting) + " levels");
  return nesting;
}

thread_local NamespaceCollector* current_collector = nullptr;

std::shared_ptr<const std::string> counted_string(std::string s) {
  BuildBudget::count_string(s.size());
  return std::make_shared<const std::string>(std::move(s));
}

// One character onto a string being built, refused before the string passes its bound.
void append_char(std::string& out, char32_t c) {
  std::string one;
  unicode::append_utf8(one, c);
  append_bounded(out, one);
}

// How many characters from `pos` are printable ASCII other than `specials`: what repr() and
// json.dumps copy as they are, a run at a time rather than a character at a time.
size_t plain_run(const std::string& text, size_t pos, std::string_view specials) {
  size_t end = pos;
  while (end < text.size() && text[end] >= 0x20 && text[end] < 0x7f && specials.find(text[end]) == std::string_view::npos)
    ++end;
  return end - pos;
}

}  // namespace

NamespaceCollector::NamespaceCollector() : outer_(current_collector) { current_collector = this; }

NamespaceCollector::~NamespaceCollector() {
  current_collector = outer_;
  // Emptied, not merely released: a namespace holding itself would keep itself alive.
  for (const auto& made : made_) {
    std::vector<std::pair<Value, Value>> items;
    items.swap(made->items);
  }
}

void NamespaceCollector::keep(const std::shared_ptr<DictData>& made) {
  if (current_collector) current_collector->made_.push_back(made);
}

void DictData::set(const Value& key, Value value) {
  nesting = std::max(nesting, checked_nesting(1 + nesting_of(value)));
  for (auto& [name, existing] : items)
    if (equals(name, key)) {
      existing = std::move(value);
      return;
    }
  items.emplace_back(key, std::move(value));
}

Value::Value(std::string s) : data_(counted_string(std::move(s))) {}

Value Value::markup(std::string s) {
  Value out(std::move(s));
  out.markup_ = true;
  return out;
}

Value Value::list(std::vector<Value> items, bool tuple) {
  BuildBudget::count_list(items.size(), sizeof(Value));
  int deepest = 0;
  for (const Value& item : items) deepest = std::max(deepest, nesting_of(item));
  auto made = std::make_shared<ListData>(ListData{std::move(items), tuple});
  made->nesting = checked_nesting(1 + deepest);
  return Value(Data(std::move(made)));
}

Value Value::dict(std::vector<std::pair<Value, Value>> items, bool namespace_object) {
  int deepest = 0;
  for (const auto& [key, value] : items) deepest = std::max(deepest, nesting_of(value));
  auto made = std::make_shared<DictData>(DictData{std::move(items), namespace_object});
  made->nesting = checked_nesting(1 + deepest);
  if (namespace_object) NamespaceCollector::keep(made);
  return Value(Data(std::move(made)));
}

Value Value::function(std::string name, std::function<Value(Arguments&)> call) {
  return Value(Data(std::make_shared<Callable>(Callable{std::move(name), std::move(call)})));
}

Value Value::from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned: return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_float: return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& item : json) items.push_back(from_json(item));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<Value, Value>> items;
      for (const auto& [key, item] : json.items()) items.emplace_back(key, from_json(item));
      return dict(std::move(items));
    }
    default: return none();
  }
}

int64_t Value::as_int() const {
  if (kind() == Kind::kBool) return as_bool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (kind() == Kind::kFloat) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_double() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return list_data().generator || !items().empty();
    case Kind::kDict: return dict_data().namespace_object || !dict_data().items.empty();
    case Kind::kCallable: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return list_data().generator ? "generator" : list_data().tuple ? "tuple" : "list";
    case Kind::kDict: return dict_data().namespace_object ? "Namespace" : "dict";
    case Kind::kCallable: return "function";
  }
  return "object";
}

bool equals(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Kind::kFloat || b.kind() == Kind::kFloat) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.as_string() == b.as_string();
    case Kind::kList: {
      if (a.list_data().generator || b.list_data().generator) return &a.list_data() == &b.list_data();
      if (a.list_data().tuple != b.list_data().tuple || a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i)
        if (!equals(a.items()[i], b.items()[i])) return false;
      return true;
    }
    case Kind::kDict: {
      if (a.dict_data().namespace_object || b.dict_data().namespace_object) return &a.dict_data() == &b.dict_data();
      if (a.dict_data().items.size() != b.dict_data().items.size()) return false;
      for (const auto& [key, value] : a.dict_data().items) {
        const Value* other = b.dict_data().find(key);
        if (!other || !equals(value, *other)) return false;
      }
      return true;
    }
    case Kind::kCallable: return &a.callable() == &b.callable();
    default: return false;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  // UTF-8 byte order is code point order, which is Python's string order.
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (less_than(x[i], y[i])) return true;
      if (less_than(y[i], x[i])) return false;
    }
    return x.size() < y.size();
  }
  throw std::invalid_argument("'<' not supported between instances of '" + a.type_name() + "' and '" +
                              b.type_name() + "'");
}

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest digits that round-trip, laid out as Python's repr does: positional for
  // exponents in [-4, 16), scientific otherwise.
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific).ptr;
  const std::string text(buffer, end);
  const size_t e = text.find('e');
  std::string mantissa = text.substr(0, e);
  const int exponent = std::stoi(text.substr(e + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out += digits + std::string(static_cast<size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exponent + 1)) + "." + digits.substr(static_cast<size_t>(exponent + 1));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exponent_text;
}

namespace {

// Python's str.isprintable() for the characters chat text carries; repr() escapes the others.
bool printable(char32_t c) {
  if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0xa0) || c == 0xad) return false;
  if (c == 0x2028 || c == 0x2029 || (c >= 0x200b && c <= 0x200f) || c == 0xfeff) return false;
  return true;
}

std::string string_repr(const std::string& text) {
  const bool has_single = text.find('\'') != std::string::npos;
  const bool has_double = text.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  const char specials[] = {'\\', quote, '\0'};
  size_t pos = 0;
  while (pos < text.size()) {
    if (const size_t run = plain_run(text, pos, specials)) {
      append_bounded(out, std::string_view(text).substr(pos, run));
      pos += run;
      continue;
    }
    const char32_t c = unicode::next_char(text, pos);
    char escape[16];
    if (c == '\\') append_bounded(out, "\\\\");
    else if (c == static_cast<char32_t>(quote)) append_bounded(out, std::string("\\") + quote);
    else if (c == '\n') append_bounded(out, "\\n");
    else if (c == '\r') append_bounded(out, "\\r");
    else if (c == '\t') append_bounded(out, "\\t");
    else if (printable(c)) append_char(out, c);
    else {
      if (c < 0x100) std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(c));
      else std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
      append_bounded(out, escape);
    }
  }
  append_bounded(out, std::string_view(&quote, 1));
  return out;
}

}  // namespace

namespace {

// Python's repr: a list or dict met again inside itself prints as [...] or {...}. `open` holds the
// containers being printed.
std::string repr_in(const Value& value, std::vector<const void*>& open) {
  using Kind = Value::Kind;
  const auto enter = [&open](const void* container) {
    if (std::find(open.begin(), open.end(), container) != open.end()) return false;
    open.push_back(container);
    return true;
  };
  switch (value.kind()) {
    case Kind::kString: return string_repr(value.as_string());
    case Kind::kList: {
      if (value.list_data().generator)
        throw std::invalid_argument("a generator (what map, select and the like return) cannot be printed; apply |list");
      const bool tuple = value.list_data().tuple;
      if (!tuple && !enter(&value.list_data())) return "[...]";
      std::string out = tuple ? "(" : "[";
      for (size_t i = 0; i < value.items().size(); ++i) {
        if (i) append_bounded(out, ", ");
        append_bounded(out, repr_in(value.items()[i], open));
      }
      if (tuple && value.items().size() == 1) append_bounded(out, ",");
      if (!tuple) open.pop_back();
      append_bounded(out, tuple ? ")" : "]");
      return out;
    }
    case Kind::kDict: {
      const bool space = value.dict_data().namespace_object;
      if (!enter(&value.dict_data())) return space ? "<Namespace {...}>" : "{...}";
      std::string out = space ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [key, item] : value.dict_data().items) {
        if (!first) append_bounded(out, ", ");
        append_bounded(out, repr_in(key, open));
        append_bounded(out, ": ");
        append_bounded(out, repr_in(item, open));
        first = false;
      }
      open.pop_back();
      append_bounded(out, space ? "}>" : "}");
      return out;
    }
    default: return to_str(value);
  }
}

}  // namespace

std::string repr(const Value& value) {
  std::vector<const void*> open;
  return repr_in(value, open);
}

std::string to_str(const Value& value) {
  using Kind = Value::Kind;
  switch (value.kind()) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return value.as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(value.as_int());
    case Kind::kFloat: return float_repr(value.as_double());
    case Kind::kString: return value.as_string();
    case Kind::kCallable: return "<function " + value.callable().name + ">";
    default: return repr(value);
  }
}

namespace {

std::string json_string(const std::string& text, bool ensure_ascii) {
  std::string out = "\"";
  size_t pos = 0;
  while (pos < text.size()) {
    if (const size_t run = plain_run(text, pos, "\"\\")) {
      append_bounded(out, std::string_view(text).substr(pos, run));
      pos += run;
      continue;
    }
    const char32_t c = unicode::next_char(text, pos);
    char escape[16];
    switch (c) {
      case '"': append_bounded(out, "\\\""); break;
      case '\\': append_bounded(out, "\\\\"); break;
      case '\n': append_bounded(out, "\\n"); break;
      case '\r': append_bounded(out, "\\r"); break;
      case '\t': append_bounded(out, "\\t"); break;
      case '\b': append_bounded(out, "\\b"); break;
      case '\f': append_bounded(out, "\\f"); break;
      default:
        if (c < 0x20 || (ensure_ascii && c > 0x7e)) {
          if (c > 0xffff) {  // a surrogate pair, as Python writes it
            const char32_t v = c - 0x10000;
            std::snprintf(escape, sizeof escape, "\\u%04x\\u%04x", static_cast<unsigned>(0xd800 + (v >> 10)),
                          static_cast<unsigned>(0xdc00 + (v & 0x3ff)));
          } else {
            std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
          }
          append_bounded(out, escape);
        } else {
          append_char(out, c);
        }
    }
  }
  append_bounded(out, "\"");
  return out;
}

// Python's json.dumps turns non-string keys into strings.
std::string json_key(const Value& key, bool ensure_ascii) {
  if (key.is_string()) return json_string(key.as_string(), ensure_ascii);
  if (key.is_none()) return "\"null\"";
  if (key.kind() == Value::Kind::kBool) return key.as_bool() ? "\"true\"" : "\"false\"";
  if (key.kind() == Value::Kind::kInt) return "\"" + std::to_string(key.as_int()) + "\"";
  if (key.kind() == Value::Kind::kFloat) return "\"" + float_repr(key.as_double()) + "\"";
  throw std::invalid_argument("keys must be str, int, float, bool or None, not " + key.type_name());
}

void write_json(const Value& value, const JsonOptions& options, int depth, std::string& out) {
  using Kind = Value::Kind;
  const auto newline = [&](int level) {
    if (!options.indented) return;
    append_bounded(out, "\n");
    for (int i = 0; i < level; ++i) append_bounded(out, options.indent);
  };
  switch (value.kind()) {
    case Kind::kNone: append_bounded(out, "null"); return;
    case Kind::kBool: append_bounded(out, value.as_bool() ? "true" : "false"); return;
    case Kind::kInt: append_bounded(out, std::to_string(value.as_int())); return;
    case Kind::kFloat: {
      const double f = value.as_double();
      if (std::isnan(f)) append_bounded(out, "NaN");
      else if (std::isinf(f)) append_bounded(out, f > 0 ? "Infinity" : "-Infinity");
      else append_bounded(out, float_repr(f));
      return;
    }
    case Kind::kString: append_bounded(out, json_string(value.as_string(), options.ensure_ascii)); return;
    case Kind::kList: {
      if (value.list_data().generator) throw std::invalid_argument("Object of type generator is not JSON serializable");
      if (value.items().empty()) {
        append_bounded(out, "[]");
        return;
      }
      append_bounded(out, "[");
      for (size_t i = 0; i < value.items().size(); ++i) {
        if (i) append_bounded(out, options.item_separator);
        newline(depth + 1);
        write_json(value.items()[i], options, depth + 1, out);
      }
      newline(depth);
      append_bounded(out, "]");
      return;
    }
    case Kind::kDict: {
      if (value.dict_data().namespace_object)
        throw std::invalid_argument("Object of type Namespace is not JSON serializable");
      auto items = value.dict_data().items;
      if (options.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return less_than(a.first, b.first); });
      if (items.empty()) {
        append_bounded(out, "{}");
        return;
      }
      append_bounded(out, "{");
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) append_bounded(out, options.item_separator);
        newline(depth + 1);
        append_bounded(out, json_key(items[i].first, options.ensure_ascii));
        append_bounded(out, options.key_separator);
        write_json(items[i].second, options, depth + 1, out);
      }
      newline(depth);
      append_bounded(out, "}");
      return;
    }
    default: throw std::invalid_argument("Object of type " + value.type_name() + " is not JSON serializable");
  }
}

}  // namespace

std::string to_json(const Value& value, const JsonOptions& options) {
  std::string out;
  write_json(value, options, 0, out);
  return out;
}

}  // namespace canrun::jinja
