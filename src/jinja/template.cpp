#include "jinja/template.h"

#include "jinja/builtins.h"
#include "jinja/interpreter.h"
#include "jinja/parser.h"

namespace canrun::jinja {

Template::Template(std::string_view source) : body_(parse(source)) {}

std::string Template::render(const std::vector<std::pair<std::string, Value>>& variables,
                             std::function<std::tm()> now) const {
  std::vector<std::pair<std::string, Value>> names = template_globals(std::move(now));
  names.insert(names.end(), variables.begin(), variables.end());
  Interpreter interpreter(std::move(names));
  std::string out;
  interpreter.render(body_, out);
  return out;
}

}  // namespace canrun::jinja
