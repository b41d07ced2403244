// Device profiles: how many cores a target offers and how much memory each core holds.
// The planner shards a model over the fewest cores of a profile that hold it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canrun {

struct DeviceProfile {
  std::string name;
  int64_t max_cores = 1;
  int64_t memory_per_core_bytes = 0;
  std::string description;
};

// This machine as one core holding its whole memory (MemTotal, or the cgroup limit when
// lower). A CPU host's cores share one memory: sharding over them adds no room, so the useful
// question here is only "does it fit at all". Sharded runs are planned against trn2 or h200.
DeviceProfile local_profile();

// local (detected), trn2 (16 cores of 24 GiB: four Trainium2 devices), h200 (1 core of 141 GB).
std::vector<DeviceProfile> builtin_profiles();

// User profiles from a JSON file:
//   {"profiles": [{"name": "inf2", "cores": 12, "memory_per_core": "16 GiB", "description": "..."}]}
// memory_per_core is a byte count or a string with a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB).
std::vector<DeviceProfile> load_profiles(const std::string& path);

// The built-in profiles followed by those of `user_file` (none when empty); a user profile may
// not reuse a name.
std::vector<DeviceProfile> available_profiles(const std::string& user_file);

// Throws a usage error listing the known names.
const DeviceProfile& find_profile(const std::vector<DeviceProfile>& profiles, const std::string& name);

// "24 GiB" -> 25769803776; "141 GB" -> 141000000000; "1024" -> 1024. Throws a usage error.
int64_t parse_byte_size(const std::string& text);

// 25769803776 -> "24.0 GiB"; below 1 GiB in MiB: 7340032 -> "7.0 MiB".
std::string format_bytes(int64_t bytes);

}  // namespace canrun
