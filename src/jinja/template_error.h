// What goes wrong in a template: a construct it cannot parse or render, or the template's own
// raise_exception(message). The line is the template's (1-based); 0 when not known.
#pragma once

#include <stdexcept>
#include <string>

namespace canrun::jinja {

class TemplateError : public std::runtime_error {
 public:
  enum class Cause { kSyntax, kRender, kRaised };
  TemplateError(Cause cause, const std::string& message, int line)
      : std::runtime_error(message), cause_(cause), line_(line) {}
  Cause cause() const { return cause_; }
  int line() const { return line_; }

 private:
  Cause cause_;
  int line_;
};

}  // namespace canrun::jinja
