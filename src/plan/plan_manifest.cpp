#include "plan/plan_manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "plan/checksum.h"

namespace canrun {
namespace {

constexpr int kManifestFormat = 1;

// A name from a manifest becomes a path below the entry's folder: reject anything that could
// leave it (a pulled manifest is foreign input).
bool safe_file_name(const std::string& name) {
  if (name.empty() || name.front() == '/' || name == kManifestName) return false;
  for (const auto& part : std::filesystem::path(name))
    if (part == ".." || part == "." || part.empty()) return false;
  return name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

Json write_manifest(const std::filesystem::path& dir, const PlanKey& key, const std::string& label) {
  Json files = Json::object();
  for (const auto& item : std::filesystem::recursive_directory_iterator(dir)) {
    if (item.is_directory()) continue;
    const std::string name = item.path().lexically_relative(dir).generic_string();
    if (!item.is_regular_file() || !safe_file_name(name))
      fail(ErrorKind::kIo, item.path().string() + ": a plan may hold only regular files, none named " + kManifestName);
    const FileDigest digest = digest_file(item.path());
    files[name] = {{"bytes", digest.bytes}, {"xxh3", digest.xxh3}};
    sync_path(item.path());
  }
  const Json manifest = {{"format", kManifestFormat}, {"digest", key.digest()}, {"key", key.to_json()},
                         {"label", label},           {"created", format_utc(std::time(nullptr))}, {"files", files}};
  const std::filesystem::path path = dir / kManifestName;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << manifest.dump(2) << "\n";
  out.close();
  if (!out) fail(ErrorKind::kIo, path.string() + ": cannot write: " + std::strerror(errno));
  sync_path(path);
  sync_path(dir);
  return manifest;
}

PlanKey manifest_key(const Json& manifest, const std::string& where) {
  if (!manifest.is_object() || !manifest.contains("key"))
    fail(ErrorKind::kIo, where + ": not a plan manifest (no \"key\")");
  const PlanKey key = PlanKey::from_json(manifest["key"], where);
  if (string_or(manifest, "digest", "") != key.digest())
    fail(ErrorKind::kIo, where + ": \"digest\" " + string_or(manifest, "digest", "(missing or not a string)") +
                             " is not the digest of its key (" + key.digest() + ")");
  return key;
}

std::vector<std::string> manifest_files(const Json& manifest, const std::string& where) {
  const auto files = manifest.find("files");
  if (files == manifest.end() || !files->is_object())
    fail(ErrorKind::kIo, where + ": \"files\" is missing or not an object");
  std::vector<std::string> names;
  for (const auto& [name, info] : files->items()) {
    if (!safe_file_name(name)) fail(ErrorKind::kIo, where + ": file name \"" + name + "\" leaves the entry's folder");
    if (!info.is_object() || !info.contains("bytes") || !info["bytes"].is_number_unsigned() ||
        !info.contains("xxh3") || !info["xxh3"].is_string())
      fail(ErrorKind::kIo, where + ": file \"" + name + "\" lacks \"bytes\" or \"xxh3\"");
    names.push_back(name);
  }
  return names;
}

uint64_t manifest_bytes(const Json& manifest) {
  uint64_t total = 0;
  if (manifest.contains("files") && manifest["files"].is_object())
    for (const auto& [name, info] : manifest["files"].items()) total += number_or(info, "bytes", uint64_t{0});
  return total;
}

std::string check_files(const std::filesystem::path& dir, const Json& manifest, bool checksums) {
  try {
    for (const std::string& name : manifest_files(manifest, (dir / kManifestName).string())) {
      const Json& expected = manifest["files"][name];
      const std::filesystem::path path = dir / name;
      std::error_code error;
      const uint64_t size = std::filesystem::file_size(path, error);
      if (error) return name + ": missing (" + error.message() + ")";
      if (size != expected["bytes"].get<uint64_t>())
        return name + ": " + std::to_string(size) + " bytes, the manifest says " +
               std::to_string(expected["bytes"].get<uint64_t>());
      if (checksums) {
        const std::string xxh3 = digest_file(path).xxh3;
        if (xxh3 != expected["xxh3"].get<std::string>())
          return name + ": xxh3 " + xxh3 + ", the manifest says " + expected["xxh3"].get<std::string>();
      }
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string check_entry(const std::filesystem::path& dir, const PlanKey* key, bool checksums, Json& manifest) {
  const std::filesystem::path manifest_path = dir / kManifestName;
  try {
    manifest = read_json_file(manifest_path.string(), ErrorKind::kIo);
    const PlanKey found = manifest_key(manifest, manifest_path.string());
    if (found.digest() != dir.filename().string())
      return "its manifest's key has digest " + found.digest() + ", not the folder's name";
    if (found.compiler_version != dir.parent_path().filename().string())
      return "its manifest is of compiler version " + found.compiler_version;
    if (key != nullptr && !(found == *key)) return "its manifest's key is not the key looked up";
    return check_files(dir, manifest, checksums);
  } catch (const Error& e) {
    return e.what();
  }
}

std::string format_utc(std::time_t time) {
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void sync_path(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorKind::kIo, path.string() + ": cannot open to sync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) fail(ErrorKind::kIo, path.string() + ": fsync failed: " + std::strerror(error));
}

}  // namespace canrun
