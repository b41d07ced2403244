// Errors that cross module boundaries. Every message names the file, field or
// parameter at fault, so a user can act on the one line the CLI prints.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace canrun {

// The category decides how a caller reports the failure (exit code, lab status).
enum class ErrorKind {
  kUsage,                    // bad command-line argument or API parameter
  kIo,                       // a file cannot be opened or read
  kCheckpoint,               // safetensors/config/generation_config is malformed
  kTokenizer,                // tokenizer.json is malformed or unsupported
  kUnsupportedArchitecture,  // model_type not in the registry
  kUnsupportedOption,        // supported family, unsupported config option
  kRuntime,                  // a request the loaded model cannot serve
};

std::string_view error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) {
  throw Error(kind, message);
}

// What an HTTP server answers for a handler's uncaught exception: "internal error: <what()>".
std::string internal_error_message(std::exception_ptr error);

}  // namespace canrun
