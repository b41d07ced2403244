// Text made safe inside HTML or SVG markup and its quoted attributes.
#pragma once

#include <string>
#include <string_view>

namespace canrun {

std::string html_escape(std::string_view text);

}  // namespace canrun
