// A request the API refuses: the HTTP status and a message that names the parameter or path.
#pragma once

#include <stdexcept>
#include <string>

namespace canrun {

class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

}  // namespace canrun
