// JSON via nlohmann::json, plus reading a file with errors that name it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "util/error.h"

namespace canrun {

using Json = nlohmann::json;

// Parses a whole JSON file; throws Error(kind) naming the path on any failure.
Json read_json_file(const std::string& path, ErrorKind kind);

// Reads a whole regular file into a string; throws Error(kIo) naming the path (also for a FIFO,
// device or folder, which are refused rather than read).
std::string read_text_file(const std::string& path);

}  // namespace canrun
