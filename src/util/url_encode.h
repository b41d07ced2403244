// Percent-encoding for URL paths.
#pragma once

#include <string>

namespace canrun {

// `text` with every byte but the unreserved ones (letters, digits, - _ . ~) percent-encoded;
// '/' stays as it is unless `encode_slash`, so a path's segments stay separate.
std::string url_encode(const std::string& text, bool encode_slash = false);

}  // namespace canrun
