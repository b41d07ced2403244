// manifest.json of a plan cache entry: its key, label, creation time, and every file with its
// byte size and XXH3-64, so an entry is checked, never trusted, wherever it came from.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "plan/plan_key.h"
#include "util/json.h"

namespace canrun {

inline constexpr const char* kManifestName = "manifest.json";
// Beside the manifest of an entry `canrun cache pull` installed: the source it came from. Not
// one of the entry's files (never checked, pushed or counted in its key).
inline constexpr const char* kPulledFromName = "pulled-from";

// Hashes every regular file below `dir` (none may be named manifest.json) and writes
// dir/manifest.json; returns it. Throws Error(kIo) naming the file.
Json write_manifest(const std::filesystem::path& dir, const PlanKey& key, const std::string& label);

// Reads dir/manifest.json and checks it describes `key` (when given) and the files in `dir`:
// each listed file present with its size and, when `checksums`, its XXH3-64. Returns what is
// wrong, or "" when all is well; `manifest` is what was read (null when unreadable).
std::string check_entry(const std::filesystem::path& dir, const PlanKey* key, bool checksums, Json& manifest);

// Checks that each file `manifest` lists is in `dir` with its size and, when `checksums`, its
// XXH3-64. Returns what is wrong ("weights.bin: 100 bytes, the manifest says 4096"), or "".
std::string check_files(const std::filesystem::path& dir, const Json& manifest, bool checksums);

// The key a manifest names; throws Error(kIo) naming `where` and the field at fault.
PlanKey manifest_key(const Json& manifest, const std::string& where);

// The names of the files a manifest lists, each checked to stay inside the entry's folder.
// Throws Error(kIo) naming `where` and the name at fault.
std::vector<std::string> manifest_files(const Json& manifest, const std::string& where);

// Total bytes of the files a manifest lists (manifest.json excluded).
uint64_t manifest_bytes(const Json& manifest);

// "2026-01-31T12:00:00Z".
std::string format_utc(std::time_t time);

// fsync(2) of a file or folder, so a rename that follows publishes complete data.
void sync_path(const std::filesystem::path& path);

}  // namespace canrun
