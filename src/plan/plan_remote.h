// Where a team's shared plans live: a folder or an HTTP(S) base URL, read with GET and written
// with PUT. Paths are relative to the base ("0.1.0/index.json").
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace canrun {

// Called with the bytes moved so far in one file.
using ByteProgress = std::function<void(uint64_t)>;

class PlanRemote {
 public:
  virtual ~PlanRemote() = default;
  // The URL or path of `relative`, for messages.
  virtual std::string where(const std::string& relative) const = 0;
  // The whole text, or nullopt when it does not exist (no such file, HTTP 404).
  virtual std::optional<std::string> read(const std::string& relative) = 0;
  // Copies to the local file `to`; a missing source is an error too.
  virtual void download(const std::string& relative, const std::filesystem::path& to, const ByteProgress& progress) = 0;
  // Stores a local file; a folder target gets it whole or not at all (temporary + rename).
  virtual void upload(const std::filesystem::path& from, const std::string& relative, const ByteProgress& progress) = 0;
  virtual void write(const std::string& relative, const std::string& text) = 0;
};

// A folder path, or an http:// or https:// URL with `headers` ("Name: value") on every request.
// Throws Error(kUsage) for a malformed URL or header, or headers given for a folder; every
// other failure is Error(kIo) naming the URL or path (and the HTTP status).
std::unique_ptr<PlanRemote> open_plan_remote(const std::string& location, const std::vector<std::string>& headers);

}  // namespace canrun
