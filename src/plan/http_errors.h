// What went wrong with an HTTP request, in words: cpp-httplib names its errors in one word
// ("Connection").
#pragma once

#include <httplib.h>

#include <string>

namespace canrun {

std::string describe_http_error(httplib::Error error);

}  // namespace canrun
