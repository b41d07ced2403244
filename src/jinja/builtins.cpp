#include "jinja/builtins.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unicode/locid.h>
#include <unicode/unistr.h>

#include "jinja/bounds.h"
#include "jinja/interpreter.h"
#include "jinja/template_error.h"
#include "tokenizer/unicode.h"

namespace canrun::jinja {
namespace {

[[noreturn]] void type_error(const std::string& message) { throw std::invalid_argument(message); }

// Reads a call's arguments by position or keyword, as a Python signature does.
class Signature {
 public:
  Signature(std::string function, Arguments& arguments) : function_(std::move(function)), arguments_(arguments) {}

  Value get(size_t position, std::string_view name, Value fallback = Value::none()) {
    names_.emplace_back(name);
    for (const auto& [given, value] : arguments_.named)
      if (given == name) return value;
    if (position < arguments_.positional.size()) return arguments_.positional[position];
    return fallback;
  }
  // Positional arguments from `position` on (a *args parameter).
  std::vector<Value> rest(size_t position) {
    rest_from_ = position;
    if (position >= arguments_.positional.size()) return {};
    return {arguments_.positional.begin() + static_cast<std::ptrdiff_t>(position), arguments_.positional.end()};
  }
  void check() const {
    if (rest_from_ == SIZE_MAX && arguments_.positional.size() > names_.size())
      type_error(function_ + "() takes at most " + std::to_string(names_.size()) + " arguments (" +
                 std::to_string(arguments_.positional.size()) + " given)");
    for (const auto& [given, value] : arguments_.named)
      if (std::find(names_.begin(), names_.end(), given) == names_.end())
        type_error(function_ + "() got an unexpected keyword argument '" + given + "'");
  }

 private:
  std::string function_;
  Arguments& arguments_;
  std::vector<std::string> names_;
  size_t rest_from_ = SIZE_MAX;
};

std::string need_string(const Value& v, const std::string& what) {
  if (!v.is_string()) type_error(what + " must be a string, not '" + v.type_name() + "'");
  return v.as_string();
}

int64_t need_int(const Value& v, const std::string& what) {
  if (v.kind() != Value::Kind::kInt && v.kind() != Value::Kind::kBool)
    type_error(what + " must be an integer, not '" + v.type_name() + "'");
  return v.as_int();
}

// Python's integers have no bound; canrun's are 64-bit, so a result past them stops the render
// rather than wrap (signed overflow is undefined in C++).
[[noreturn]] void integer_overflow(const std::string& op) {
  type_error("integer overflow: the result of " + op + " does not fit in 64 bits");
}

// Python's int(float): toward zero; NaN has no integer value.
int64_t truncated(double value) {
  if (std::isnan(value)) type_error("cannot convert float NaN to integer");
  // 2^63 is exactly representable; every double below it and at or above -2^63 fits.
  if (!(value < 9223372036854775808.0 && value >= -9223372036854775808.0)) integer_overflow("int()");
  return static_cast<int64_t>(value);
}

// How many items Python's range(start, stop, step) has; step is not 0.
int64_t range_length(int64_t start, int64_t stop, int64_t step) {
  const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  if (span <= 0) return 0;
  const __int128 stride = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  // range(-2**63, 2**63 - 1) has 2**64 - 1 items: past int64, and past any bound a caller sets.
  return static_cast<int64_t>(std::min<__int128>((span - 1) / stride + 1, INT64_MAX));
}

std::u32string chars(const std::string& s) { return unicode::to_utf32(s); }

// One item onto a list being built, refused before the list passes its bound.
void push_item(std::vector<Value>& items, Value item) {
  checked_list_items(items.size() + 1);
  items.push_back(std::move(item));
}

std::string utf8(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) unicode::append_utf8(out, c);
  return out;
}

// Python's str.isspace() characters.
bool python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::string strip(const std::string& text, const Value& characters, bool left, bool right) {
  const std::u32string s = chars(text);
  const std::u32string set = characters.is_none() || characters.is_undefined()
                                 ? std::u32string() : chars(need_string(characters, "strip's chars"));
  const auto strips = [&](char32_t c) {
    return characters.is_none() || characters.is_undefined() ? python_space(c) : set.find(c) != std::u32string::npos;
  };
  size_t begin = 0, end = s.size();
  if (left)
    while (begin < end && strips(s[begin])) ++begin;
  if (right)
    while (end > begin && strips(s[end - 1])) --end;
  return utf8(std::u32string_view(s).substr(begin, end - begin));
}

std::string case_map(const std::string& text, bool upper) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);
  if (upper) u.toUpper(icu::Locale::getRoot());
  else u.toLower(icu::Locale::getRoot());
  std::string out;
  u.toUTF8String(out);
  return out;
}

bool is_cased_letter(char32_t c) { return case_map(utf8(std::u32string(1, c)), true) != case_map(utf8(std::u32string(1, c)), false); }

std::string title(const std::string& text) {
  std::string out;
  bool previous_cased = false;
  for (char32_t c : chars(text)) {
    const std::string one = utf8(std::u32string(1, c));
    append_bounded(out, previous_cased ? case_map(one, false) : case_map(one, true));
    previous_cased = is_cased_letter(c);
  }
  return out;
}

std::string capitalize(const std::string& text) {
  const std::u32string s = chars(text);
  if (s.empty()) return "";
  return case_map(utf8(s.substr(0, 1)), true) + case_map(utf8(s.substr(1)), false);
}

std::string replace_all(const std::string& text, const std::string& old, const std::string& replacement, int64_t count) {
  // The result's size first: replacing '' in a long string multiplies it.
  uint64_t replaced = 0;
  if (old.empty()) {
    replaced = chars(text).size() + 1;
  } else {
    for (size_t pos = text.find(old); pos != std::string::npos; pos = text.find(old, pos + old.size())) ++replaced;
  }
  if (count >= 0) replaced = std::min(replaced, static_cast<uint64_t>(count));
  std::string out;
  out.reserve(checked_string_bytes(text.size() - size_product(replaced, old.size()) +
                                   size_product(replaced, replacement.size())));
  if (old.empty()) {  // Python inserts the replacement between every character
    const std::u32string s = chars(text);
    int64_t done = 0;
    for (char32_t c : s) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      unicode::append_utf8(out, c);
    }
    if (count < 0 || done < count) out += replacement;
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t found = text.find(old, pos);
    if (found == std::string::npos) break;
    out.append(text, pos, found - pos).append(replacement);
    pos = found + old.size();
    ++done;
  }
  return out + text.substr(pos);
}

std::vector<Value> split(const std::string& text, const Value& separator, int64_t max_splits) {
  std::vector<Value> parts;
  if (separator.is_none()) {  // runs of whitespace, none at either end
    const std::u32string s = chars(text);
    size_t i = 0;
    while (true) {
      while (i < s.size() && python_space(s[i])) ++i;
      if (i == s.size()) break;
      if (max_splits >= 0 && static_cast<int64_t>(parts.size()) == max_splits) {
        size_t end = s.size();
        while (end > i && python_space(s[end - 1])) --end;
        push_item(parts, utf8(std::u32string_view(s).substr(i, end - i)));
        break;
      }
      size_t j = i;
      while (j < s.size() && !python_space(s[j])) ++j;
      push_item(parts, utf8(std::u32string_view(s).substr(i, j - i)));
      i = j;
    }
    return parts;
  }
  const std::string& sep = need_string(separator, "split's separator");
  if (sep.empty()) type_error("empty separator");
  size_t pos = 0;
  while (max_splits < 0 || static_cast<int64_t>(parts.size()) < max_splits) {
    const size_t found = text.find(sep, pos);
    if (found == std::string::npos) break;
    push_item(parts, text.substr(pos, found - pos));
    pos = found + sep.size();
  }
  push_item(parts, text.substr(pos));
  return parts;
}

std::vector<Value> rsplit(const std::string& text, const Value& separator, int64_t max_splits) {
  if (separator.is_none() || max_splits < 0) return split(text, separator, max_splits);
  const std::string& sep = need_string(separator, "rsplit's separator");
  if (sep.empty()) type_error("empty separator");
  std::vector<Value> parts;
  size_t end = text.size();
  while (static_cast<int64_t>(parts.size()) < max_splits) {
    if (end < sep.size()) break;
    const size_t found = text.rfind(sep, end - sep.size());
    if (found == std::string::npos) break;
    push_item(parts, text.substr(found + sep.size(), end - found - sep.size()));
    end = found;
  }
  push_item(parts, text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

bool affix_matches(const std::string& text, const Value& affix, bool at_start) {
  const auto one = [&](const Value& a) {
    const std::string& s = need_string(a, at_start ? "startswith's prefix" : "endswith's suffix");
    if (s.size() > text.size()) return false;
    return at_start ? text.compare(0, s.size(), s) == 0 : text.compare(text.size() - s.size(), s.size(), s) == 0;
  };
  if (affix.is_list()) {
    for (const Value& a : affix.items())
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

// Python's str.format with {}, {0} and {name} fields (no format specs, which templates do not use).
std::string format(const std::string& pattern, Arguments& arguments) {
  std::string out;
  size_t automatic = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      append_bounded(out, "{");
      ++i;
    } else if (c == '}' && i + 1 < pattern.size() && pattern[i + 1] == '}') {
      append_bounded(out, "}");
      ++i;
    } else if (c == '{') {
      const size_t close = pattern.find('}', i);
      if (close == std::string::npos) type_error("Single '{' encountered in format string");
      const std::string field = pattern.substr(i + 1, close - i - 1);
      if (field.find_first_of(":!") != std::string::npos) type_error("format specs are not supported: {" + field + "}");
      if (field.empty() || std::all_of(field.begin(), field.end(), ::isdigit)) {
        const size_t index = field.empty() ? automatic++ : std::stoul(field);
        if (index >= arguments.positional.size()) type_error("Replacement index " + std::to_string(index) + " out of range");
        append_bounded(out, to_str(arguments.positional[index]));
      } else {
        bool found = false;
        for (const auto& [name, value] : arguments.named)
          if (name == field) {
            append_bounded(out, to_str(value));
            found = true;
          }
        if (!found) type_error("'" + field + "'");
      }
      i = close;
    } else {
      append_bounded(out, std::string_view(&c, 1));
    }
  }
  return out;
}

// printf-style `text % values` for %s, %d, %i, %r and %%.
std::string percent_format(const std::string& pattern, const Value& values) {
  std::vector<Value> args = values.is_list() && values.list_data().tuple ? values.items() : std::vector<Value>{values};
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      append_bounded(out, std::string_view(&pattern[i], 1));
      continue;
    }
    if (++i >= pattern.size()) type_error("incomplete format");
    const char spec = pattern[i];
    if (spec == '%') {
      append_bounded(out, "%");
      continue;
    }
    if (next >= args.size()) type_error("not enough arguments for format string");
    const Value& arg = args[next++];
    if (spec == 's') append_bounded(out, to_str(arg));
    else if (spec == 'r') append_bounded(out, repr(arg));
    else if (spec == 'd' || spec == 'i') {
      if (!arg.is_number()) type_error("%d format: a real number is required, not " + arg.type_name());
      append_bounded(out, std::to_string(arg.kind() == Value::Kind::kFloat ? truncated(arg.as_double()) : arg.as_int()));
    } else type_error(std::string("unsupported format character '") + spec + "'");
  }
  if (next < args.size()) type_error("not all arguments converted during string formatting");
  return out;
}

int64_t python_length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(chars(v.as_string()).size());
    case Value::Kind::kList:
      if (v.list_data().generator) type_error("object of type 'generator' has no len()");
      return static_cast<int64_t>(v.items().size());
    case Value::Kind::kDict: return static_cast<int64_t>(v.dict_data().items.size());
    default: type_error("object of type '" + v.type_name() + "' has no len()");
  }
}

// markupsafe.escape: a Markup string stays as it is, anything else is HTML-escaped.
std::string escaped(const Value& v) {
  if (v.is_markup()) return v.as_string();
  const std::string text = to_str(v);
  std::string out;
  size_t copied = 0;  // text before this is in `out`
  for (size_t i = 0; i < text.size(); ++i) {
    const char* entity = nullptr;
    switch (text[i]) {
      case '&': entity = "&amp;"; break;
      case '<': entity = "&lt;"; break;
      case '>': entity = "&gt;"; break;
      case '"': entity = "&#34;"; break;
      case '\'': entity = "&#39;"; break;
      default: continue;
    }
    append_bounded(out, std::string_view(text).substr(copied, i - copied));
    append_bounded(out, entity);
    copied = i + 1;
  }
  append_bounded(out, std::string_view(text).substr(copied));
  return out;
}

Value generator(std::vector<Value> items) {
  Value out = Value::list(std::move(items));
  out.list_data().generator = true;
  return out;
}

Value bound(const std::string& name, std::function<Value(Arguments&)> call) { return Value::function(name, std::move(call)); }

std::optional<Value> string_method(const std::string& s, const std::string& name) {
  const std::string qualified = "str." + name;
  const auto make = [&](auto body) { return bound(qualified, [s, qualified, body](Arguments& a) {
                                       Signature sig(qualified, a);
                                       Value result = body(sig, a);
                                       sig.check();
                                       return result;
                                     }); };
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return make([s, name](Signature& sig, Arguments&) {
      return Value(strip(s, sig.get(0, "chars"), name != "rstrip", name != "lstrip"));
    });
  if (name == "split" || name == "rsplit")
    return make([s, name](Signature& sig, Arguments&) {
      const Value sep = sig.get(0, "sep");
      const int64_t max_splits = need_int(sig.get(1, "maxsplit", Value(-1)), "maxsplit");
      return Value::list(name == "split" ? split(s, sep, max_splits) : rsplit(s, sep, max_splits));
    });
  if (name == "splitlines")
    return make([s](Signature& sig, Arguments&) {
      const bool keep = sig.get(0, "keepends", Value(false)).truthy();
      std::vector<Value> lines;
      size_t start = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\n' && s[i] != '\r') continue;
        size_t end = i + 1;
        if (s[i] == '\r' && end < s.size() && s[end] == '\n') ++end;
        push_item(lines, s.substr(start, (keep ? end : i) - start));
        start = end;
        i = end - 1;
      }
      if (start < s.size()) push_item(lines, s.substr(start));
      return Value::list(std::move(lines));
    });
  if (name == "startswith" || name == "endswith")
    return make([s, name](Signature& sig, Arguments&) { return Value(affix_matches(s, sig.get(0, "prefix"), name == "startswith")); });
  if (name == "upper" || name == "lower")
    return make([s, name](Signature&, Arguments&) { return Value(case_map(s, name == "upper")); });
  if (name == "title") return make([s](Signature&, Arguments&) { return Value(title(s)); });
  if (name == "capitalize") return make([s](Signature&, Arguments&) { return Value(capitalize(s)); });
  if (name == "replace")
    return make([s](Signature& sig, Arguments&) {
      return Value(replace_all(s, need_string(sig.get(0, "old"), "replace's old"), need_string(sig.get(1, "new"), "replace's new"),
                               need_int(sig.get(2, "count", Value(-1)), "count")));
    });
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count")
    return make([s, name](Signature& sig, Arguments&) {
      const std::string& sub = need_string(sig.get(0, "sub"), name + "'s argument");
      if (name == "count") {
        if (sub.empty()) return Value(python_length(Value(s)) + 1);
        int64_t n = 0;
        for (size_t pos = s.find(sub); pos != std::string::npos; pos = s.find(sub, pos + sub.size())) ++n;
        return Value(n);
      }
      const size_t found = name == "find" || name == "index" ? s.find(sub) : s.rfind(sub);
      if (found == std::string::npos) {
        if (name == "index" || name == "rindex") type_error("substring not found");
        return Value(-1);
      }
      return Value(static_cast<int64_t>(chars(s.substr(0, found)).size()));
    });
  if (name == "join")
    return make([s](Signature& sig, Arguments&) {
      std::string out;
      bool first = true;
      for (const Value& item : iterate(sig.get(0, "iterable"))) {
        if (!first) append_bounded(out, s);
        append_bounded(out, need_string(item, "str.join's items"));
        first = false;
      }
      return Value(out);
    });
  if (name == "format")
    return bound(qualified, [s](Arguments& a) { return Value(format(s, a)); });
  if (name == "removeprefix" || name == "removesuffix")
    return make([s, name](Signature& sig, Arguments&) {
      const std::string& affix = need_string(sig.get(0, "affix"), name + "'s argument");
      if (name == "removeprefix" && s.compare(0, affix.size(), affix) == 0) return Value(s.substr(affix.size()));
      if (name == "removesuffix" && !affix.empty() && s.size() >= affix.size() &&
          s.compare(s.size() - affix.size(), affix.size(), affix) == 0)
        return Value(s.substr(0, s.size() - affix.size()));
      return Value(s);
    });
  if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" || name == "isupper" ||
      name == "islower")
    return make([s, name](Signature&, Arguments&) {
      const std::u32string c = chars(s);
      if (name == "isupper" || name == "islower") {
        const bool has_cased = case_map(s, true) != case_map(s, false);
        return Value(has_cased && (name == "isupper" ? case_map(s, true) == s : case_map(s, false) == s));
      }
      if (c.empty()) return Value(false);
      for (char32_t ch : c) {
        const bool digit = ch >= '0' && ch <= '9';
        const bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch > 0x7f && is_cased_letter(ch));
        const bool ok = name == "isdigit" ? digit : name == "isalpha" ? alpha : name == "isalnum" ? digit || alpha : python_space(ch);
        if (!ok) return Value(false);
      }
      return Value(true);
    });
  return std::nullopt;
}

// Methods that would change a list or dict: the immutable sandbox refuses them.
bool mutates(const Value& object, const std::string& name) {
  static const char* const kList[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
  static const char* const kDict[] = {"pop", "popitem", "setdefault", "update", "clear"};
  if (object.is_list())
    return std::any_of(std::begin(kList), std::end(kList), [&](const char* m) { return name == m; });
  if (object.is_mapping())
    return std::any_of(std::begin(kDict), std::end(kDict), [&](const char* m) { return name == m; });
  return false;
}

std::optional<Value> container_method(const Value& object, const std::string& name) {
  if (object.is_mapping()) {
    const std::string qualified = "dict." + name;
    if (name == "get")
      return bound(qualified, [object, qualified](Arguments& a) {
        Signature sig(qualified, a);
        const Value key = sig.get(0, "key");
        const Value fallback = sig.get(1, "default");
        sig.check();
        const Value* found = object.dict_data().find(key);
        return found ? *found : fallback;
      });
    if (name == "items" || name == "keys" || name == "values")
      return bound(qualified, [object, name](Arguments&) {
        std::vector<Value> out;
        for (const auto& [key, value] : object.dict_data().items) {
          if (name == "items") out.push_back(Value::list({Value(key), value}, true));
          else out.push_back(name == "keys" ? Value(key) : value);
        }
        return Value::list(std::move(out));
      });
    if (name == "copy") return bound(qualified, [object](Arguments&) { return Value::dict(object.dict_data().items); });
  }
  if (object.is_list() && (name == "index" || name == "count")) {
    return bound("list." + name, [object, name](Arguments& a) {
      if (a.positional.size() != 1) type_error("list." + name + "() takes exactly one argument");
      int64_t n = 0;
      for (size_t i = 0; i < object.items().size(); ++i)
        if (equals(object.items()[i], a.positional[0])) {
          if (name == "index") return Value(static_cast<int64_t>(i));
          ++n;
        }
      if (name == "index") type_error(repr(a.positional[0]) + " is not in list");
      return Value(n);
    });
  }
  return std::nullopt;
}

std::string object_name(const Value& v) {
  if (v.is_none()) return "None";
  return v.type_name() + " object";
}

// ---- filters ----

using FilterFunction = std::function<Value(Interpreter&, const Value&, Signature&)>;

Value soft_str(const Value& v) { return v.is_string() ? v : Value(to_str(v)); }

// A dotted attribute path ("function.name") as Jinja2's make_attrgetter reads it.
Value attribute_path(const Value& item, const Value& path) {
  if (path.kind() == Value::Kind::kInt) return item_of(item, path);
  Value current = item;
  for (const Value& part : split(need_string(path, "attribute"), Value("."), -1)) {
    const std::string& name = part.as_string();
    const bool numeric = !name.empty() && std::all_of(name.begin(), name.end(), ::isdigit);
    current = item_of(current, numeric ? Value(static_cast<int64_t>(std::stoll(name))) : part);
    if (current.is_undefined()) break;
  }
  return current;
}

Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(case_map(v.as_string(), false));
  return v;
}

// `width` spaces (none for a negative width, as Python's ' ' * width), refused past the bound on a
// string before they are made.
std::string spaces(int64_t width) { return std::string(checked_string_bytes(static_cast<uint64_t>(std::max<int64_t>(0, width))), ' '); }

JsonOptions json_options(Signature& sig) {
  JsonOptions options;
  options.ensure_ascii = sig.get(0, "ensure_ascii", Value(false)).truthy();
  const Value indent = sig.get(1, "indent");
  const Value separators = sig.get(2, "separators");
  options.sort_keys = sig.get(3, "sort_keys", Value(false)).truthy();
  if (!indent.is_none()) {
    options.indented = true;
    options.indent = indent.is_string() ? indent.as_string() : spaces(need_int(indent, "indent"));
    options.item_separator = ",";
  }
  if (!separators.is_none()) {
    if (!separators.is_list() || separators.items().size() != 2) type_error("separators must be a pair of strings");
    options.item_separator = need_string(separators.items()[0], "separators");
    options.key_separator = need_string(separators.items()[1], "separators");
  }
  return options;
}

std::string indent(const std::string& text, const Value& width, bool first, bool blank) {
  const std::string indention = width.is_string() ? width.as_string() : spaces(need_int(width, "width"));
  std::string out;
  if (first) append_bounded(out, indention);
  // Jinja2 splits on "\n" after adding one, so a text ending in a newline ends in an empty line.
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    const std::string_view line = std::string_view(text).substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (start > 0 && (blank || !line.empty())) append_bounded(out, indention);
    append_bounded(out, line);
    if (end == std::string::npos) break;
    append_bounded(out, "\n");
    start = end + 1;
  }
  return out;
}

const std::map<std::string, FilterFunction, std::less<>>& filters();

std::vector<Value> select_items(Interpreter& in, const Value& input, Signature& sig, bool by_attribute, bool keep) {
  const Value attribute = by_attribute ? sig.get(0, "attribute") : Value::none();
  const size_t test_at = by_attribute ? 1 : 0;
  std::vector<Value> rest = sig.rest(test_at);
  std::string test_name;
  Arguments test_arguments;
  if (!rest.empty()) {
    test_name = need_string(rest[0], "the test's name");
    if (!has_test(test_name)) type_error("No test named '" + test_name + "'.");
    test_arguments.positional.assign(rest.begin() + 1, rest.end());
  }
  std::vector<Value> out;
  if (!input.truthy()) return out;  // Jinja2 yields nothing for a false value, None included
  for (const Value& item : iterate(input)) {
    const Value subject = by_attribute ? attribute_path(item, attribute) : item;
    const bool passes = test_name.empty() ? subject.truthy() : apply_test(in, test_name, subject, test_arguments);
    if (passes == keep) out.push_back(item);
  }
  return out;
}

const std::map<std::string, FilterFunction, std::less<>>& filters() {
  static const std::map<std::string, FilterFunction, std::less<>> table = [] {
    std::map<std::string, FilterFunction, std::less<>> t;
    t["tojson"] = [](Interpreter&, const Value& v, Signature& sig) { return Value(to_json(v, json_options(sig))); };
    t["length"] = [](Interpreter&, const Value& v, Signature&) { return Value(python_length(v)); };
    t["count"] = t["length"];
    t["string"] = [](Interpreter&, const Value& v, Signature&) { return soft_str(v); };
    t["safe"] = [](Interpreter&, const Value& v, Signature&) { return Value::markup(to_str(v)); };
    t["trim"] = [](Interpreter&, const Value& v, Signature& sig) {
      return Value(strip(soft_str(v).as_string(), sig.get(0, "chars"), true, true));
    };
    t["upper"] = [](Interpreter&, const Value& v, Signature&) { return Value(case_map(soft_str(v).as_string(), true)); };
    t["lower"] = [](Interpreter&, const Value& v, Signature&) { return Value(case_map(soft_str(v).as_string(), false)); };
    t["title"] = [](Interpreter&, const Value& v, Signature&) { return Value(title(soft_str(v).as_string())); };
    t["capitalize"] = [](Interpreter&, const Value& v, Signature&) { return Value(capitalize(soft_str(v).as_string())); };
    t["default"] = [](Interpreter&, const Value& v, Signature& sig) {
      const Value fallback = sig.get(0, "default_value", Value(""));
      const bool boolean = sig.get(1, "boolean", Value(false)).truthy();
      return v.is_undefined() || (boolean && !v.truthy()) ? fallback : v;
    };
    t["d"] = t["default"];
    t["join"] = [](Interpreter&, const Value& v, Signature& sig) {
      const std::string separator = to_str(sig.get(0, "d", Value("")));
      const Value attribute = sig.get(1, "attribute");
      std::string out;
      bool first = true;
      for (const Value& item : iterate(v)) {
        if (!first) append_bounded(out, separator);
        append_bounded(out, to_str(attribute.is_none() ? item : attribute_path(item, attribute)));
        first = false;
      }
      return Value(out);
    };
    t["items"] = [](Interpreter&, const Value& v, Signature&) {
      if (v.is_undefined()) return Value::list();
      if (!v.is_mapping()) type_error("Can only get item pairs from a mapping.");
      std::vector<Value> out;
      for (const auto& [key, value] : v.dict_data().items) out.push_back(Value::list({Value(key), value}, true));
      return Value::list(std::move(out));
    };
    t["dictsort"] = [](Interpreter&, const Value& v, Signature& sig) {
      const bool case_sensitive = sig.get(0, "case_sensitive", Value(false)).truthy();
      const std::string by = to_str(sig.get(1, "by", Value("key")));
      const bool reverse = sig.get(2, "reverse", Value(false)).truthy();
      if (!v.is_mapping()) type_error("dictsort needs a mapping, not '" + v.type_name() + "'");
      std::vector<Value> out;
      for (const auto& [key, value] : v.dict_data().items) out.push_back(Value::list({Value(key), value}, true));
      const size_t position = by == "value" ? 1 : 0;
      std::stable_sort(out.begin(), out.end(), [&](const Value& a, const Value& b) {
        const Value ka = sort_key(a.items()[position], case_sensitive), kb = sort_key(b.items()[position], case_sensitive);
        return reverse ? less_than(kb, ka) : less_than(ka, kb);
      });
      return Value::list(std::move(out));
    };
    t["list"] = [](Interpreter&, const Value& v, Signature&) { return Value::list(iterate(v)); };
    t["first"] = [](Interpreter&, const Value& v, Signature&) {
      const std::vector<Value> items = iterate(v);
      return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
    };
    t["last"] = [](Interpreter&, const Value& v, Signature&) {
      const std::vector<Value> items = iterate(v);
      return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
    };
    t["reverse"] = [](Interpreter&, const Value& v, Signature&) {
      if (v.is_string()) {
        std::u32string s = chars(v.as_string());
        std::reverse(s.begin(), s.end());
        return Value(utf8(s));
      }
      std::vector<Value> items = iterate(v);
      std::reverse(items.begin(), items.end());
      return Value::list(std::move(items));
    };
    t["replace"] = [](Interpreter&, const Value& v, Signature& sig) {
      const Value count = sig.get(2, "count");
      return Value(replace_all(soft_str(v).as_string(), to_str(sig.get(0, "old")), to_str(sig.get(1, "new")),
                               count.is_none() ? -1 : need_int(count, "count")));
    };
    t["selectattr"] = [](Interpreter& in, const Value& v, Signature& sig) { return generator(select_items(in, v, sig, true, true)); };
    t["rejectattr"] = [](Interpreter& in, const Value& v, Signature& sig) { return generator(select_items(in, v, sig, true, false)); };
    t["select"] = [](Interpreter& in, const Value& v, Signature& sig) { return generator(select_items(in, v, sig, false, true)); };
    t["reject"] = [](Interpreter& in, const Value& v, Signature& sig) { return generator(select_items(in, v, sig, false, false)); };
    t["map"] = [](Interpreter& in, const Value& v, Signature& sig) {
      const Value attribute = sig.get(SIZE_MAX, "attribute");
      std::vector<Value> out;
      if (!v.truthy()) return generator(std::move(out));
      if (!attribute.is_none()) {
        const Value fallback = sig.get(SIZE_MAX, "default", Value::undefined("no such attribute"));
        for (const Value& item : iterate(v)) {
          const Value found = attribute_path(item, attribute);
          out.push_back(found.is_undefined() ? fallback : found);
        }
        return generator(std::move(out));
      }
      std::vector<Value> rest = sig.rest(0);
      if (rest.empty()) type_error("map requires a filter argument");
      const std::string name = need_string(rest[0], "map's filter");
      if (!has_filter(name)) type_error("No filter named '" + name + "'.");
      for (const Value& item : iterate(v)) {
        Arguments arguments;
        arguments.positional.assign(rest.begin() + 1, rest.end());
        out.push_back(apply_filter(in, name, item, arguments));
      }
      return generator(std::move(out));
    };
    t["indent"] = [](Interpreter&, const Value& v, Signature& sig) {
      const Value width = sig.get(0, "width", Value(4));
      const bool first = sig.get(1, "first", Value(false)).truthy();
      const bool blank = sig.get(2, "blank", Value(false)).truthy();
      return Value(indent(soft_str(v).as_string(), width, first, blank));
    };
    t["int"] = [](Interpreter&, const Value& v, Signature& sig) {
      const Value fallback = sig.get(0, "default", Value(0));
      if (v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kBool) return Value(v.as_int());
      // Jinja2's do_int: int(value), else int(float(value)), else the default; NaN has no integer.
      const auto from_float = [&](double d) { return std::isnan(d) ? fallback : Value(truncated(d)); };
      if (v.kind() == Value::Kind::kFloat) return from_float(v.as_double());
      if (v.is_string()) {
        const std::string s = strip(v.as_string(), Value::none(), true, true);
        size_t used = 0;
        try {
          const int64_t parsed = std::stoll(s, &used);
          if (used == s.size()) return Value(parsed);
        } catch (const std::logic_error&) {  // not an integer, or past 64 bits: read as a float
        }
        double parsed = 0;
        try {
          parsed = std::stod(s, &used);
        } catch (const std::logic_error&) {
          used = 0;
        }
        if (used > 0 && used == s.size()) return from_float(parsed);
      }
      return fallback;
    };
    t["float"] = [](Interpreter&, const Value& v, Signature& sig) {
      const Value fallback = sig.get(0, "default", Value(0.0));
      if (v.is_number()) return Value(v.as_double());
      if (v.is_string()) {
        try {
          size_t used = 0;
          const std::string s = strip(v.as_string(), Value::none(), true, true);
          const double d = std::stod(s, &used);
          if (used == s.size()) return Value(d);
        } catch (const std::exception&) {
        }
      }
      return fallback;
    };
    t["abs"] = [](Interpreter&, const Value& v, Signature&) {
      if (v.kind() == Value::Kind::kFloat) return Value(std::fabs(v.as_double()));
      if (!v.is_number()) type_error("bad operand type for abs(): '" + v.type_name() + "'");
      return v.as_int() < 0 ? arithmetic("-", Value(0), v) : Value(v.as_int());
    };
    const auto ordered = [](bool descending, bool pick_one) {
      return [descending, pick_one](Interpreter&, const Value& v, Signature& sig) {
        const bool reverse = pick_one ? false : sig.get(0, "reverse", Value(false)).truthy();
        const bool case_sensitive = sig.get(pick_one ? 0 : 1, "case_sensitive", Value(false)).truthy();
        const Value attribute = sig.get(pick_one ? 1 : 2, "attribute");
        std::vector<Value> items = iterate(v);
        const auto key = [&](const Value& item) {
          return sort_key(attribute.is_none() ? item : attribute_path(item, attribute), case_sensitive);
        };
        std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
          return (reverse || descending) ? less_than(key(b), key(a)) : less_than(key(a), key(b));
        });
        if (!pick_one) return Value::list(std::move(items));
        return items.empty() ? Value::undefined("No aggregated item, sequence was empty.") : items.front();
      };
    };
    t["sort"] = ordered(false, false);
    t["min"] = ordered(false, true);
    t["max"] = ordered(true, true);
    t["unique"] = [](Interpreter&, const Value& v, Signature& sig) {
      const bool case_sensitive = sig.get(0, "case_sensitive", Value(false)).truthy();
      const Value attribute = sig.get(1, "attribute");
      std::vector<Value> out, seen;
      for (const Value& item : iterate(v)) {
        const Value key = sort_key(attribute.is_none() ? item : attribute_path(item, attribute), case_sensitive);
        if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
          seen.push_back(key);
          out.push_back(item);
        }
      }
      return generator(std::move(out));
    };
    t["escape"] = [](Interpreter&, const Value& v, Signature&) { return Value::markup(escaped(v)); };
    t["e"] = t["escape"];
    t["format"] = [](Interpreter&, const Value& v, Signature& sig) {
      return Value(percent_format(soft_str(v).as_string(), Value::list(sig.rest(0), true)));
    };
    t["wordcount"] = [](Interpreter&, const Value& v, Signature&) {
      return Value(static_cast<int64_t>(split(soft_str(v).as_string(), Value::none(), -1).size()));
    };
    t["center"] = [](Interpreter&, const Value& v, Signature& sig) {
      const std::u32string s = chars(soft_str(v).as_string());
      const int64_t width = need_int(sig.get(0, "width", Value(80)), "width");
      if (static_cast<int64_t>(s.size()) >= width) return Value(utf8(s));
      const size_t total = static_cast<size_t>(width) - s.size();
      const size_t left = total / 2 + (total & static_cast<size_t>(width) & 1);
      const std::string text = utf8(s);
      std::string out;
      out.reserve(checked_string_bytes(uint64_t{text.size()} + total));
      out.append(left, ' ').append(text).append(total - left, ' ');
      return Value(std::move(out));
    };
    return t;
  }();
  return table;
}

// ---- tests ----

using TestFunction = std::function<bool(Interpreter&, const Value&, Signature&)>;

const std::map<std::string, TestFunction, std::less<>>& tests() {
  static const std::map<std::string, TestFunction, std::less<>> table = [] {
    std::map<std::string, TestFunction, std::less<>> t;
    using K = Value::Kind;
    t["defined"] = [](Interpreter&, const Value& v, Signature&) { return !v.is_undefined(); };
    t["undefined"] = [](Interpreter&, const Value& v, Signature&) { return v.is_undefined(); };
    t["none"] = [](Interpreter&, const Value& v, Signature&) { return v.is_none(); };
    t["string"] = [](Interpreter&, const Value& v, Signature&) { return v.is_string(); };
    t["mapping"] = [](Interpreter&, const Value& v, Signature&) { return v.is_mapping(); };
    t["iterable"] = [](Interpreter&, const Value& v, Signature&) {
      return v.is_undefined() || v.is_string() || v.is_list() || v.is_mapping();
    };
    t["sequence"] = [](Interpreter&, const Value& v, Signature&) {
      return v.is_undefined() || v.is_string() || v.is_list() || v.is_mapping();
    };
    t["number"] = [](Interpreter&, const Value& v, Signature&) { return v.is_number(); };
    t["integer"] = [](Interpreter&, const Value& v, Signature&) { return v.kind() == K::kInt; };
    t["float"] = [](Interpreter&, const Value& v, Signature&) { return v.kind() == K::kFloat; };
    t["boolean"] = [](Interpreter&, const Value& v, Signature&) { return v.kind() == K::kBool; };
    t["true"] = [](Interpreter&, const Value& v, Signature&) { return v.kind() == K::kBool && v.as_bool(); };
    t["false"] = [](Interpreter&, const Value& v, Signature&) { return v.kind() == K::kBool && !v.as_bool(); };
    t["callable"] = [](Interpreter&, const Value& v, Signature&) { return v.is_callable(); };
    t["odd"] = [](Interpreter&, const Value& v, Signature&) { return need_int(v, "odd's value") % 2 != 0; };
    t["even"] = [](Interpreter&, const Value& v, Signature&) { return need_int(v, "even's value") % 2 == 0; };
    t["divisibleby"] = [](Interpreter&, const Value& v, Signature& sig) {
      const int64_t n = need_int(sig.get(0, "num"), "divisibleby's argument");
      if (n == 0) type_error("integer division or modulo by zero");
      return arithmetic("%", Value(need_int(v, "divisibleby's value")), Value(n)).as_int() == 0;
    };
    t["eq"] = [](Interpreter&, const Value& v, Signature& sig) { return equals(v, sig.get(0, "other")); };
    t["equalto"] = t["=="] = t["eq"];
    t["ne"] = [](Interpreter&, const Value& v, Signature& sig) { return !equals(v, sig.get(0, "other")); };
    t["!="] = t["ne"];
    t["lt"] = [](Interpreter&, const Value& v, Signature& sig) { return less_than(v, sig.get(0, "other")); };
    t["lessthan"] = t["<"] = t["lt"];
    t["gt"] = [](Interpreter&, const Value& v, Signature& sig) { return less_than(sig.get(0, "other"), v); };
    t["greaterthan"] = t[">"] = t["gt"];
    t["le"] = [](Interpreter&, const Value& v, Signature& sig) { return !less_than(sig.get(0, "other"), v); };
    t["<="] = t["le"];
    t["ge"] = [](Interpreter&, const Value& v, Signature& sig) { return !less_than(v, sig.get(0, "other")); };
    t[">="] = t["ge"];
    t["in"] = [](Interpreter&, const Value& v, Signature& sig) { return contains(sig.get(0, "seq"), v); };
    t["sameas"] = [](Interpreter&, const Value& v, Signature& sig) {
      const Value other = sig.get(0, "other");
      if (v.kind() != other.kind()) return false;
      if (v.is_list()) return &v.list_data() == &other.list_data();
      if (v.is_dict()) return &v.dict_data() == &other.dict_data();
      return equals(v, other);
    };
    t["upper"] = [](Interpreter&, const Value& v, Signature&) {
      const std::string s = to_str(v);
      return case_map(s, true) == s && case_map(s, true) != case_map(s, false);
    };
    t["lower"] = [](Interpreter&, const Value& v, Signature&) {
      const std::string s = to_str(v);
      return case_map(s, false) == s && case_map(s, true) != case_map(s, false);
    };
    return t;
  }();
  return table;
}

int64_t normalize_index(int64_t index, int64_t size) { return index < 0 ? index + size : index; }

}  // namespace

std::string python_strip(const std::string& text, bool left, bool right) {
  return strip(text, Value::none(), left, right);
}

bool has_filter(std::string_view name) { return filters().count(name) > 0; }
bool has_test(std::string_view name) { return tests().count(name) > 0; }

Value apply_filter(Interpreter& in, const std::string& name, const Value& input, Arguments& arguments) {
  const auto it = filters().find(name);
  if (it == filters().end()) type_error("No filter named '" + name + "'.");
  // Filters other than these treat a missing value as an error, as Jinja2's Undefined does.
  static const char* const kTakeUndefined[] = {"default", "d", "length", "count", "string", "list", "items", "trim",
                                               "join", "safe", "first", "last", "upper", "lower", "select", "reject",
                                               "selectattr", "rejectattr", "map", "unique", "sort", "replace", "escape", "e"};
  if (input.is_undefined() &&
      std::none_of(std::begin(kTakeUndefined), std::end(kTakeUndefined), [&](const char* f) { return name == f; }))
    type_error(input.undefined_what());
  Signature signature(name, arguments);
  Value result = it->second(in, input, signature);
  signature.check();
  return result;
}

bool apply_test(Interpreter& in, const std::string& name, const Value& input, Arguments& arguments) {
  const auto it = tests().find(name);
  if (it == tests().end()) type_error("No test named '" + name + "'.");
  Signature signature(name, arguments);
  const bool result = it->second(in, input, signature);
  signature.check();
  return result;
}

std::vector<Value> iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: return value.items();
    case Value::Kind::kDict: {
      if (value.dict_data().namespace_object) type_error("'Namespace' object is not iterable");
      std::vector<Value> keys;
      for (const auto& [key, item] : value.dict_data().items) keys.emplace_back(key);
      return keys;
    }
    case Value::Kind::kString: {
      const std::u32string text = chars(value.as_string());
      checked_list_items(text.size());
      std::vector<Value> out;
      for (char32_t c : text) out.emplace_back(utf8(std::u32string(1, c)));
      return out;
    }
    default: type_error("'" + value.type_name() + "' object is not iterable");
  }
}

Value attribute_of(const Value& object, const std::string& name) {
  if (mutates(object, name))
    type_error("access to attribute '" + name + "' of '" + object.type_name() + "' object is unsafe.");
  if (object.is_string())
    if (auto method = string_method(object.as_string(), name)) return *method;
  if (auto method = container_method(object, name)) return *method;
  if (object.is_dict())
    if (const Value* found = object.dict_data().find(std::string_view(name))) return *found;
  return Value::undefined("'" + object_name(object) + "' has no attribute '" + name + "'");
}

Value item_of(const Value& object, const Value& key) {
  if (object.is_dict()) {
    if (const Value* found = object.dict_data().find(key)) return *found;
  } else if ((object.is_list() || object.is_string()) && (key.kind() == Value::Kind::kInt || key.kind() == Value::Kind::kBool)) {
    if (object.is_list()) {
      const int64_t size = static_cast<int64_t>(object.items().size());
      const int64_t index = normalize_index(key.as_int(), size);
      if (index >= 0 && index < size) return object.items()[static_cast<size_t>(index)];
    } else {
      const std::u32string s = chars(object.as_string());
      const int64_t size = static_cast<int64_t>(s.size());
      const int64_t index = normalize_index(key.as_int(), size);
      if (index >= 0 && index < size) return Value(utf8(s.substr(static_cast<size_t>(index), 1)));
    }
  }
  if (key.is_string()) return attribute_of(object, key.as_string());
  return Value::undefined("'" + object_name(object) + "' has no attribute " + repr(key));
}

Value slice_of(const Value& object, const Value& start, const Value& stop, const Value& step) {
  const auto read = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none()) return std::nullopt;
    return need_int(v, std::string("slice ") + what);
  };
  const int64_t stride = read(step, "step").value_or(1);
  if (stride == 0) type_error("slice step cannot be zero");
  std::u32string text;
  std::vector<Value> items;
  int64_t size = 0;
  if (object.is_string()) {
    text = chars(object.as_string());
    size = static_cast<int64_t>(text.size());
  } else if (object.is_list()) {
    items = object.items();
    size = static_cast<int64_t>(items.size());
  } else {
    type_error("'" + object.type_name() + "' object is not subscriptable");
  }
  // Python's slice.indices.
  const auto clamp = [&](std::optional<int64_t> bound, int64_t fallback) {
    if (!bound) return fallback;
    int64_t i = *bound < 0 ? *bound + size : *bound;
    if (stride > 0) return std::clamp<int64_t>(i, 0, size);
    return std::clamp<int64_t>(i, -1, size - 1);
  };
  const int64_t begin = clamp(read(start, "start"), stride > 0 ? 0 : size - 1);
  const int64_t end = clamp(read(stop, "stop"), stride > 0 ? size : -1);
  std::u32string text_out;
  std::vector<Value> items_out;
  // Counted, not stepped past `end`: a huge step would leave 64 bits.
  const int64_t count = range_length(begin, end, stride);
  for (int64_t k = 0; k < count; ++k) {
    const size_t i = static_cast<size_t>(begin + k * stride);
    if (object.is_string()) text_out += text[i];
    else items_out.push_back(items[i]);
  }
  if (object.is_string()) return Value(utf8(text_out));
  return Value::list(std::move(items_out), object.list_data().tuple);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!item.is_string()) type_error("'in <string>' requires string as left operand, not " + item.type_name());
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      return std::any_of(container.items().begin(), container.items().end(), [&](const Value& v) { return equals(v, item); });
    case Value::Kind::kDict:
      return !container.dict_data().namespace_object && container.dict_data().find(item);
    default: type_error("argument of type '" + container.type_name() + "' is not iterable");
  }
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  const auto unsupported = [&]() -> Value {
    if (op == "+" && a.is_string())
      type_error("can only concatenate str (not \"" + b.type_name() + "\") to str");
    type_error("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
  };
  if (op == "%" && a.is_string()) return Value(percent_format(a.as_string(), b));
  if (op == "+" && a.is_string() && b.is_string()) {
    const bool markup = a.is_markup() || b.is_markup();
    std::string out = markup ? escaped(a) : a.as_string();
    append_bounded(out, markup ? escaped(b) : b.as_string());
    return markup ? Value::markup(std::move(out)) : Value(std::move(out));
  }
  if (op == "+" && a.is_list() && b.is_list() && a.list_data().tuple == b.list_data().tuple) {
    std::vector<Value> items;
    items.reserve(checked_list_items(uint64_t{a.items().size()} + b.items().size()));
    items.insert(items.end(), a.items().begin(), a.items().end());
    items.insert(items.end(), b.items().begin(), b.items().end());
    return Value::list(std::move(items), a.list_data().tuple);
  }
  if (op == "*" && (a.is_string() || a.is_list()) && (b.kind() == Value::Kind::kInt || b.kind() == Value::Kind::kBool)) {
    // An empty value repeated any number of times is empty, without looping that many times.
    const size_t unit = a.is_string() ? a.as_string().size() : a.items().size();
    const uint64_t times = unit == 0 ? 0 : static_cast<uint64_t>(std::max<int64_t>(0, b.as_int()));
    if (a.is_string()) {
      std::string out;
      out.reserve(checked_string_bytes(size_product(unit, times)));
      for (uint64_t i = 0; i < times; ++i) out += a.as_string();
      return Value(std::move(out));
    }
    std::vector<Value> items;
    items.reserve(checked_list_items(size_product(unit, times)));
    for (uint64_t i = 0; i < times; ++i) items.insert(items.end(), a.items().begin(), a.items().end());
    return Value::list(std::move(items), a.list_data().tuple);
  }
  if (!a.is_number() || !b.is_number()) return unsupported();
  const bool floating = a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat;
  if (op == "/") {
    if (b.as_double() == 0) type_error("division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (floating) {
    const double x = a.as_double(), y = b.as_double();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "**") return Value(std::pow(x, y));
    if (y == 0) type_error("float division by zero");
    if (op == "//") return Value(std::floor(x / y));
    if (op == "%") {
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value(r);
    }
    return unsupported();
  }
  const int64_t x = a.as_int(), y = b.as_int();
  int64_t r = 0;
  const auto checked = [&](bool overflowed) {
    if (overflowed) integer_overflow(op);
    return Value(r);
  };
  if (op == "+") return checked(__builtin_add_overflow(x, y, &r));
  if (op == "-") return checked(__builtin_sub_overflow(x, y, &r));
  if (op == "*") return checked(__builtin_mul_overflow(x, y, &r));
  if (op == "**") {
    if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
    // By squaring: 63 steps at most, where 1 ** (2**62) would otherwise loop 2**62 times. Once the
    // squared base overflows with exponent bits left, the result overflows too (|base| >= 2).
    bool overflowed = false;
    int64_t base = x;
    r = 1;
    for (uint64_t e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
      if (e & 1) overflowed |= __builtin_mul_overflow(r, base, &r);
      if (e > 1) overflowed |= __builtin_mul_overflow(base, base, &base);
      if (overflowed) break;
    }
    return checked(overflowed);
  }
  if (y == 0) type_error("integer division or modulo by zero");
  // The one quotient past 64 bits (and a division the processor traps): -2**63 // -1.
  if (y == -1) {
    if (op == "%") return Value(0);
    if (op == "//") return checked(__builtin_sub_overflow(int64_t{0}, x, &r));
  }
  int64_t quotient = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --quotient;
  if (op == "//") return Value(quotient);
  if (op == "%") return Value(x - quotient * y);
  return unsupported();
}

std::vector<std::pair<std::string, Value>> template_globals(std::function<std::tm()> now) {
  std::vector<std::pair<std::string, Value>> globals;
  globals.emplace_back("raise_exception", Value::function("raise_exception", [](Arguments& a) -> Value {
    throw TemplateError(TemplateError::Cause::kRaised, a.positional.empty() ? "" : to_str(a.positional[0]), 0);
  }));
  globals.emplace_back("strftime_now", Value::function("strftime_now", [now](Arguments& a) {
    Signature sig("strftime_now", a);
    const std::string& pattern = need_string(sig.get(0, "format"), "strftime_now's format");
    sig.check();
    const std::tm time = now();
    std::string out(256, '\0');
    const size_t written = std::strftime(out.data(), out.size(), pattern.c_str(), &time);
    out.resize(written);
    return Value(out);
  }));
  const auto make_dict = [](bool namespace_object) {
    return [namespace_object](Arguments& a) {
      Value out = Value::dict({}, namespace_object);
      for (const Value& positional : a.positional) {
        if (!positional.is_mapping()) type_error("namespace() and dict() take a mapping positionally");
        for (const auto& [key, value] : positional.dict_data().items) out.dict_data().set(key, value);
      }
      for (const auto& [key, value] : a.named) {
        if (namespace_object && !key.empty() && key.front() == '_')
          type_error("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" + key +
                     "'. Please rename the attribute.");
        out.dict_data().set(key, value);
      }
      return out;
    };
  };
  globals.emplace_back("namespace", Value::function("namespace", make_dict(true)));
  globals.emplace_back("dict", Value::function("dict", make_dict(false)));
  globals.emplace_back("range", Value::function("range", [](Arguments& a) {
    if (a.positional.empty() || a.positional.size() > 3 || !a.named.empty()) type_error("range expected 1 to 3 arguments");
    int64_t start = 0, stop = 0, step = 1;
    if (a.positional.size() == 1) stop = need_int(a.positional[0], "range's stop");
    else {
      start = need_int(a.positional[0], "range's start");
      stop = need_int(a.positional[1], "range's stop");
      if (a.positional.size() == 3) step = need_int(a.positional[2], "range's step");
    }
    if (step == 0) type_error("range() arg 3 must not be zero");
    // transformers renders in jinja2's sandbox, which refuses ranges longer than its MAX_RANGE.
    constexpr int64_t kMaxRange = 100000;
    const int64_t length = range_length(start, stop, step);
    if (length > kMaxRange)
      throw std::overflow_error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    std::vector<Value> out;
    // Counted, not stepped to `stop`: the step past the last item may leave 64 bits.
    for (int64_t i = 0; i < length; ++i) out.emplace_back(static_cast<int64_t>(start + static_cast<__int128>(i) * step));
    return Value::list(std::move(out));
  }));
  return globals;
}

}  // namespace canrun::jinja
