// A request's JSON body as the server's parsers read it: the object, a field that is present and
// not null, and the 400 that names the field at fault.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace canrun {

using OrderedJson = nlohmann::ordered_json;

// The body as a JSON object; a 400 when it is not valid JSON or not an object.
OrderedJson parse_request_object(const std::string& body);

// The field when present and not null.
const OrderedJson* request_field(const OrderedJson& body, const char* name);

// A 400 naming `param`: "PARAM: MESSAGE".
[[noreturn]] void invalid_param(const std::string& param, const std::string& message);

}  // namespace canrun
