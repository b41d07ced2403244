#include "jinja/template.h"

#include <algorithm>
#include <optional>

#include "jinja/bounds.h"
#include "jinja/builtins.h"
#include "jinja/interpreter.h"
#include "jinja/parser.h"
#include "jinja/template_error.h"
#include "tokenizer/unicode.h"

namespace canrun::jinja {

namespace {

// The size first, so an oversized template costs nothing; then the text: Python reads a template
// as text, so bytes that are not UTF-8 never reach Jinja.
std::string_view parsable_source(std::string_view source) {
  if (source.size() > kMaxTemplateBytes)
    throw TemplateError(TemplateError::Cause::kSyntax,
                        "the template is " + std::to_string(source.size()) + " bytes, more than the " +
                            std::to_string(kMaxTemplateBytes >> 20) + " MiB canrun parses",
                        0);
  if (const std::optional<size_t> bad = unicode::first_invalid_utf8(source)) {
    const int line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + *bad, '\n'));
    throw TemplateError(TemplateError::Cause::kSyntax, "not UTF-8 text (byte " + std::to_string(*bad) + ")", line);
  }
  return source;
}

}  // namespace

Template::Template(std::string_view source) : body_(parse(parsable_source(source))) {}

std::string Template::render(const std::vector<std::pair<std::string, Value>>& variables,
                             std::function<std::tm()> now) const {
  std::vector<std::pair<std::string, Value>> names = template_globals(std::move(now));
  names.insert(names.end(), variables.begin(), variables.end());
  const NamespaceCollector namespaces;  // declared first: the interpreter's scopes go before it empties them
  const BuildBudget budget;
  Interpreter interpreter(std::move(names));
  std::string out;
  interpreter.render(body_, out);
  return out;
}

}  // namespace canrun::jinja
