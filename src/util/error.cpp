#include "util/error.h"

namespace canrun {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kIo: return "io";
    case ErrorKind::kCheckpoint: return "checkpoint";
    case ErrorKind::kTokenizer: return "tokenizer";
    case ErrorKind::kUnsupportedArchitecture: return "unsupported_architecture";
    case ErrorKind::kUnsupportedOption: return "unsupported_option";
    case ErrorKind::kRuntime: return "runtime";
  }
  return "unknown";
}

std::string internal_error_message(std::exception_ptr error) {
  std::string message = "internal error";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    message += std::string(": ") + e.what();
  } catch (...) {
  }
  return message;
}

}  // namespace canrun
