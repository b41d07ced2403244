// Jinja2's grammar, as its parser reads it (operator precedence, tests without parentheses,
// `for ... if`), for the statements Hub chat templates use: if/elif/else, for/else with
// break/continue, set (also on a namespace attribute and as a block), macro, filter blocks and
// transformers' generation block. Any other tag is an error naming the line; an unknown filter
// or test is one only when it runs, as in Jinja2.
#pragma once

#include <string_view>

#include "jinja/nodes.h"

namespace canrun::jinja {

Body parse(std::string_view source);

}  // namespace canrun::jinja
