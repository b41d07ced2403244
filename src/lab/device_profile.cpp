#include "lab/device_profile.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "checkpoint/config_reader.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// A number in a one-line file, or 0 when the file is absent or says "max".
int64_t read_number_file(const std::string& path) {
  std::ifstream in(path);
  int64_t value = 0;
  return (in >> value) ? value : 0;
}

int64_t mem_total_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(256, '\n');
  }
  fail(ErrorKind::kIo, "/proc/meminfo: no MemTotal line");
}

int64_t cpu_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

DeviceProfile local_profile() {
  int64_t memory = mem_total_bytes();
  // A container's cgroup v2 limit is what this process can really use.
  const int64_t cgroup_limit = read_number_file("/sys/fs/cgroup/memory.max");
  if (cgroup_limit > 0 && cgroup_limit < memory) memory = cgroup_limit;
  return {"local", 1, memory,
          "this machine as one core: " + std::to_string(cpu_count()) + " CPUs sharing " + format_bytes(memory)};
}

std::vector<DeviceProfile> builtin_profiles() {
  return {local_profile(),
          {"trn2", 16, 24 * kGiB, "up to 16 cores of 24 GiB: four Trainium2 devices"},
          {"h200", 1, 141'000'000'000, "one NVIDIA H200: 141 GB of HBM3e"}};
}

int64_t parse_byte_size(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> kUnits = {
      {"", 1},          {"B", 1},       {"KB", 1e3},        {"MB", 1e6},        {"GB", 1e9},
      {"TB", 1e12},     {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  std::istringstream in(text);
  double number = 0;
  std::string unit;
  if (!(in >> number) || number <= 0 || !std::isfinite(number))
    fail(ErrorKind::kUsage, "'" + text + "' is not a positive size such as \"24 GiB\"");
  in >> unit;
  std::string rest;
  if (in >> rest) fail(ErrorKind::kUsage, "'" + text + "': unexpected '" + rest + "' after the unit");
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    // 2^63 bytes: no address space or memory is larger, and llround past it is undefined.
    if (number * scale >= 0x1p63) fail(ErrorKind::kUsage, "'" + text + "' is larger than any memory");
    return static_cast<int64_t>(std::llround(number * scale));
  }
  fail(ErrorKind::kUsage, "'" + text + "': unknown unit '" + unit + "' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
}

std::string format_bytes(int64_t bytes) {
  char text[32];
  if (bytes < kGiB)
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / kGiB);
  return text;
}

std::vector<DeviceProfile> load_profiles(const std::string& path) {
  const Json json = read_json_file(path, ErrorKind::kUsage);
  const ConfigReader file(json, path);
  const Json& list = file.has("profiles") ? json["profiles"] : Json();
  if (!list.is_array() || list.empty()) file.reject("profiles", "must be a non-empty list of profiles");
  std::vector<DeviceProfile> profiles;
  for (size_t i = 0; i < list.size(); ++i) {
    const ConfigReader entry(list[i], path + ": profiles[" + std::to_string(i) + "]");
    DeviceProfile profile;
    profile.name = entry.string("name", std::nullopt);
    if (profile.name.empty()) entry.reject("name", "must not be empty");
    profile.max_cores = entry.integer("cores", std::nullopt, 1, 4096);
    const Json& memory = entry.has("memory_per_core") ? list[i]["memory_per_core"] : Json();
    if (memory.is_number_integer() && memory.get<int64_t>() > 0) {
      profile.memory_per_core_bytes = memory.get<int64_t>();
    } else if (memory.is_string()) {
      try {
        profile.memory_per_core_bytes = parse_byte_size(memory.get<std::string>());
      } catch (const Error& e) {
        entry.reject("memory_per_core", e.what());
      }
    } else {
      entry.reject("memory_per_core", "must be a positive byte count or a size such as \"24 GiB\", got " +
                                          memory.dump());
    }
    profile.description = entry.string("description", std::string("from ") + path);
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

std::vector<DeviceProfile> available_profiles(const std::string& user_file) {
  std::vector<DeviceProfile> profiles = builtin_profiles();
  if (user_file.empty()) return profiles;
  for (DeviceProfile& profile : load_profiles(user_file)) {
    for (const DeviceProfile& known : profiles)
      if (known.name == profile.name)
        fail(ErrorKind::kUsage, user_file + ": profile '" + profile.name + "' is defined twice (built-in names: " +
                                    "local, trn2, h200)");
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

const DeviceProfile& find_profile(const std::vector<DeviceProfile>& profiles, const std::string& name) {
  std::string names;
  for (const DeviceProfile& profile : profiles) {
    if (profile.name == name) return profile;
    names += (names.empty() ? "" : ", ") + profile.name;
  }
  fail(ErrorKind::kUsage, "unknown device profile '" + name + "' (known: " + names + ")");
}

}  // namespace canrun
