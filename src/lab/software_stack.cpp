#include "lab/software_stack.h"

#include <arrow/util/config.h>
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "compile/compiler.h"
#include "kernels/cpu/onednn_product.h"
#include "lab/source_commit.h"
#include "parallel/communicator.h"
#include "util/version.h"

namespace canrun {
namespace {

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

VersionPair engine_version_pair() { return {std::string("canrun-") + kVersion, "cpu-" + kernel_isa()}; }

std::vector<StackComponent> software_stack() {
  utsname system{};
  uname(&system);
  return {
      {"canrun", std::string(kVersion) + " (" + source_commit() + ")"},
      {"backend", "cpu (compiled; bf16 weights kept as stored, f32 accumulation), verified against ref (f32)"},
      {"isa", kernel_isa()},
      {"compile step", "canrun " + std::string(kVersion) + ": packed weights and prefill/decode plans per prompt "
                       "bucket, kept in the plan cache"},
      {"g++", __VERSION__},
      {"arrow", ARROW_VERSION_STRING},
      {"mpi", mpi_library_version()},
      {"onednn", cpu::onednn_version()},
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
