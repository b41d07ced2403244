#include "kernels/backend.h"

#include <string>

#include "util/error.h"

namespace canrun {

std::string_view backend_name(Backend backend) { return backend == Backend::kRef ? "ref" : "cpu"; }

Backend parse_backend(std::string_view name, std::string_view option) {
  if (name == "ref") return Backend::kRef;
  if (name == "cpu") return Backend::kCpu;
  fail(ErrorKind::kUsage, std::string(option) + ": unknown backend '" + std::string(name) + "' (ref, cpu)");
}

}  // namespace canrun
