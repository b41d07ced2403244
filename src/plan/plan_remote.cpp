#include "plan/plan_remote.h"

#include <httplib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "plan/http_errors.h"
#include "util/error.h"
#include "util/json.h"
#include "util/url_encode.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

void create_parent(const fs::path& path) {
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (error) fail(ErrorKind::kIo, path.parent_path().string() + ": cannot create folder: " + error.message());
}

class FolderRemote : public PlanRemote {
 public:
  explicit FolderRemote(fs::path base) : base_(std::move(base)) {}

  std::string where(const std::string& relative) const override { return (base_ / relative).string(); }

  std::optional<std::string> read(const std::string& relative) override {
    std::error_code error;
    if (!fs::exists(base_ / relative, error)) return std::nullopt;
    return read_text_file(where(relative));
  }

  void download(const std::string& relative, const fs::path& to, const ByteProgress& progress) override {
    std::error_code error;
    create_parent(to);
    fs::copy_file(base_ / relative, to, fs::copy_options::overwrite_existing, error);
    if (error) fail(ErrorKind::kIo, where(relative) + ": cannot copy to " + to.string() + ": " + error.message());
    progress(fs::file_size(to, error));
  }

  void upload(const fs::path& from, const std::string& relative, const ByteProgress& progress) override {
    const fs::path temp = temporary(relative);
    std::error_code error;
    fs::copy_file(from, temp, fs::copy_options::overwrite_existing, error);
    if (error) fail(ErrorKind::kIo, from.string() + ": cannot copy to " + temp.string() + ": " + error.message());
    publish(temp, relative);
    progress(fs::file_size(from, error));
  }

  void write(const std::string& relative, const std::string& text) override {
    const fs::path temp = temporary(relative);
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) fail(ErrorKind::kIo, temp.string() + ": cannot write: " + std::strerror(errno));
    publish(temp, relative);
  }

 private:
  fs::path temporary(const std::string& relative) const {
    const fs::path path = base_ / relative;
    create_parent(path);
    return path.string() + ".tmp-" + std::to_string(::getpid());
  }

  void publish(const fs::path& temp, const std::string& relative) const {
    std::error_code error;
    fs::rename(temp, base_ / relative, error);
    if (error) {
      fs::remove(temp, error);
      fail(ErrorKind::kIo, "cannot rename " + temp.string() + " to " + where(relative) + ": " + error.message());
    }
  }

  fs::path base_;
};

class HttpRemote : public PlanRemote {
 public:
  HttpRemote(const std::string& url, httplib::Headers headers) : headers_(std::move(headers)) {
    const size_t host_start = url.find("://") + 3;
    const size_t path_start = url.find('/', host_start);
    origin_ = url.substr(0, path_start);
    base_path_ = path_start == std::string::npos ? "" : url.substr(path_start);
    while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
    if (host_start == path_start || origin_.size() == host_start)
      fail(ErrorKind::kUsage, url + ": not a valid URL (no host)");
    client_ = std::make_unique<httplib::Client>(origin_);
    if (!client_->is_valid()) fail(ErrorKind::kUsage, url + ": not a valid URL");
    client_->set_connection_timeout(10);
    client_->set_read_timeout(300);
    client_->set_write_timeout(300);
    client_->set_follow_location(true);
  }

  std::string where(const std::string& relative) const override { return origin_ + path(relative); }

  std::optional<std::string> read(const std::string& relative) override {
    const httplib::Result result = client_->Get(path(relative), headers_);
    if (!result) fail(ErrorKind::kIo, where(relative) + ": " + describe_http_error(result.error()));
    if (result->status == 404) return std::nullopt;
    check_status(relative, "GET", result->status);
    return result->body;
  }

  void download(const std::string& relative, const fs::path& to, const ByteProgress& progress) override {
    create_parent(to);
    std::ofstream out(to, std::ios::binary | std::ios::trunc);
    if (!out) fail(ErrorKind::kIo, to.string() + ": cannot create: " + std::strerror(errno));
    int status = 0;
    uint64_t received = 0;
    const httplib::Result result = client_->Get(
        path(relative), headers_,
        [&](const httplib::Response& response) {
          status = response.status;
          return status == 200;
        },
        [&](const char* data, size_t size) {
          out.write(data, static_cast<std::streamsize>(size));
          received += size;
          progress(received);
          return static_cast<bool>(out);
        });
    if (status != 0) check_status(relative, "GET", status);
    if (!result) fail(ErrorKind::kIo, where(relative) + ": " + describe_http_error(result.error()));
    out.close();
    if (!out) fail(ErrorKind::kIo, to.string() + ": write error");
  }

  void upload(const fs::path& from, const std::string& relative, const ByteProgress& progress) override {
    std::ifstream in(from, std::ios::binary);
    std::error_code error;
    const uint64_t size = fs::file_size(from, error);
    if (!in || error) fail(ErrorKind::kIo, from.string() + ": cannot open for upload");
    std::vector<char> buffer(1 << 20);
    const httplib::Result result = client_->Put(
        path(relative), headers_, size,
        [&](size_t offset, size_t length, httplib::DataSink& sink) {
          in.seekg(static_cast<std::streamoff>(offset));
          in.read(buffer.data(), static_cast<std::streamsize>(std::min(length, buffer.size())));
          if (in.gcount() <= 0) return false;
          sink.write(buffer.data(), static_cast<size_t>(in.gcount()));
          progress(offset + static_cast<uint64_t>(in.gcount()));
          return true;
        },
        "application/octet-stream");
    finish_put(relative, result);
  }

  void write(const std::string& relative, const std::string& text) override {
    finish_put(relative, client_->Put(path(relative), headers_, text, "application/json"));
  }

 private:
  std::string path(const std::string& relative) const { return base_path_ + "/" + url_encode(relative); }

  void check_status(const std::string& relative, const char* method, int status) const {
    if (status < 200 || status >= 300)
      fail(ErrorKind::kIo, where(relative) + ": HTTP " + std::to_string(status) + " on " + method);
  }

  void finish_put(const std::string& relative, const httplib::Result& result) const {
    if (!result) fail(ErrorKind::kIo, where(relative) + ": " + describe_http_error(result.error()));
    check_status(relative, "PUT", result->status);
  }

  httplib::Headers headers_;
  std::string origin_;     // "https://host:port"
  std::string base_path_;  // "/team/plans", no trailing '/'
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace

std::unique_ptr<PlanRemote> open_plan_remote(const std::string& location, const std::vector<std::string>& headers) {
  if (location.empty()) fail(ErrorKind::kUsage, "empty plan location: give a folder or an http(s):// URL");
  const bool http = location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0;
  if (!http && location.find("://") != std::string::npos)
    fail(ErrorKind::kUsage, location + ": unsupported URL scheme (use a folder, http:// or https://)");
  if (!http) {
    if (!headers.empty()) fail(ErrorKind::kUsage, "--header applies to http(s):// locations, not the folder " + location);
    return std::make_unique<FolderRemote>(location);
  }
  httplib::Headers parsed;
  for (const std::string& header : headers) {
    const size_t colon = header.find(':');
    if (colon == 0 || colon == std::string::npos)
      fail(ErrorKind::kUsage, "--header \"" + header + "\": expected \"Name: value\"");
    const size_t value = header.find_first_not_of(' ', colon + 1);
    parsed.emplace(header.substr(0, colon), value == std::string::npos ? "" : header.substr(value));
  }
  return std::make_unique<HttpRemote>(location, std::move(parsed));
}

}  // namespace canrun
