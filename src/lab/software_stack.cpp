#include "lab/software_stack.h"

#include <arrow/util/config.h>
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "runtime/communicator.h"
#include "util/version.h"

namespace canrun {
namespace {

std::string compiled_isa() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__)
  return "avx2";
#elif defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

// The value of the first line of `path` starting with `key`, after its separator.
std::string field_of(const std::string& path, const std::string& key, char separator) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(key)) continue;
    std::string value = line.substr(line.find(separator) + 1);
    value.erase(0, value.find_first_not_of(" \t\""));
    while (!value.empty() && (value.back() == '"' || value.back() == ' ')) value.pop_back();
    return value;
  }
  return "unknown";
}

}  // namespace

VersionPair engine_version_pair() { return {std::string("canrun-") + kVersion, "ref-" + compiled_isa()}; }

std::vector<StackComponent> software_stack() {
  utsname system{};
  uname(&system);
  return {
      {"canrun", std::string(kVersion) + " (" + source_commit() + ")"},
      {"backend", "ref (f32 compute)"},
      {"isa", compiled_isa()},
      {"compile step", "none yet: the engine has no compiler or plan cache, compile_time_s is null"},
      {"g++", __VERSION__},
      {"arrow", ARROW_VERSION_STRING},
      {"mpi", mpi_library_version()},
      {"glibc", gnu_get_libc_version()},
      {"os", field_of("/etc/os-release", "PRETTY_NAME=", '=')},
      {"kernel", std::string(system.sysname) + " " + system.release},
      {"cpu", field_of("/proc/cpuinfo", "model name", ':')},
  };
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::string source_commit() { return CANRUN_SOURCE_COMMIT; }

}  // namespace canrun
