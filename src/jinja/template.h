// A Jinja template as transformers renders chat templates: parsed once, rendered with the
// template globals (raise_exception, strftime_now, namespace, dict, range) and the caller's
// variables. Errors are TemplateError with the template's line; a source longer than
// kMaxTemplateBytes is refused first.
#pragma once

#include <cstddef>
#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jinja/nodes.h"

namespace canrun::jinja {

// The Hub's chat templates are at most tens of kilobytes; lexing and parsing cost about a hundred
// bytes of memory per byte of source, so a longer one is refused before it is read or parsed.
inline constexpr size_t kMaxTemplateBytes = size_t{1} << 20;

class Template {
 public:
  explicit Template(std::string_view source);

  // `now` is the time strftime_now formats (local time when rendering for real).
  std::string render(const std::vector<std::pair<std::string, Value>>& variables, std::function<std::tm()> now) const;

 private:
  Body body_;
};

}  // namespace canrun::jinja
