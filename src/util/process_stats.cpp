#include "util/process_stats.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace canrun {

int64_t peak_resident_bytes() {
  // VmHWM is this program's own peak. getrusage's ru_maxrss is not: Linux keeps it across
  // execve, so a process started by a large parent (a Python test runner, a notebook) would
  // report the parent's size at fork.
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmHWM:")) return std::stoll(line.substr(6)) * 1024;  // "VmHWM:   38124 kB"
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace canrun
