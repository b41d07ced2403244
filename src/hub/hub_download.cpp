#include "hub/hub_download.h"

#include <fnmatch.h>
#include <openssl/evp.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "hub/hf_cache.h"
#include "hub/http_session.h"
#include "plan/file_lock.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json.h"
#include "util/url_encode.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;

constexpr int kAttempts = 5;  // a server error or a dropped connection is tried again, resuming

std::string where(const HubRef& ref) { return ref.repo_id + "@" + ref.revision; }

// The error for an HTTP status the Hub answered `what` with.
[[noreturn]] void fail_status(const HttpReply& reply, const std::string& what, const HubRef& ref,
                              const HubSettings& settings) {
  const std::string page = settings.endpoint + "/" + ref.repo_id;
  const std::string code = reply.header("x-error-code");
  if (reply.status == 401)
    fail(ErrorKind::kIo, ref.repo_id + ": the Hub answered 401 Unauthorized for " + what +
                             ": the repository is gated or private and " +
                             (settings.token.empty() ? "HF_TOKEN is not set" : "the token in HF_TOKEN is not valid") +
                             "; accept its terms at " + page + " and set HF_TOKEN to a token with read access");
  if (reply.status == 403)
    fail(ErrorKind::kIo, ref.repo_id + ": the Hub answered 403 Forbidden for " + what +
                             ": the token has no access to this gated repository; request access at " + page);
  if (reply.status == 404 && code == "RevisionNotFound")
    fail(ErrorKind::kUsage, ref.repo_id + ": revision '" + ref.revision + "' does not exist");
  if (reply.status == 404 && code == "EntryNotFound")
    fail(ErrorKind::kIo, where(ref) + ": " + what + " does not exist");
  if (reply.status == 404)
    fail(ErrorKind::kUsage, ref.repo_id + ": no such model repository at " + settings.endpoint +
                                (settings.token.empty() ? " (a private one needs HF_TOKEN)" : ""));
  fail(ErrorKind::kIo, where(ref) + ": the Hub answered HTTP " + std::to_string(reply.status) + " for " + what);
}

// Runs `request` until it answers with a status below 500, trying a dropped connection or a
// server error again after a short, growing pause.
template <class Request>
HttpReply with_retries(const Request& request) {
  for (int attempt = 1;; ++attempt) {
    std::optional<HttpReply> reply;
    try {
      reply = request();
    } catch (const HostUnreachable&) {
      throw;
    } catch (const Error&) {
      if (attempt == kAttempts) throw;
    }
    if (reply && (reply->status < 500 || attempt == kAttempts)) return *reply;
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
}

struct RemoteFile {
  std::string path;
  std::string etag;  // the blob's name: sha256 for LFS files, git's blob sha1 for the rest
  int64_t size = -1;
  std::string url;  // where its bytes are, after the Hub's redirect
};

std::string unquote_etag(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

bool is_hex(const std::string& text, size_t size) {
  return text.size() == size && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The hex digest of `path` that `etag` is: sha256 of the bytes (64 hex digits), or git's blob
// sha1 (40); "" when the etag is neither, so only the size can be checked.
std::string digest_like(const std::string& etag, const std::string& path, int64_t size) {
  const bool sha256 = is_hex(etag, 64);
  if (!sha256 && !is_hex(etag, 40)) return "";
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(context, sha256 ? EVP_sha256() : EVP_sha1(), nullptr);
  if (!sha256) {
    const std::string header = "blob " + std::to_string(size);
    EVP_DigestUpdate(context, header.c_str(), header.size() + 1);  // with its NUL
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    EVP_DigestUpdate(context, buffer.data(), static_cast<size_t>(in.gcount()));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context, digest, &length);
  EVP_MD_CTX_free(context);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) (hex += kHex[digest[i] >> 4]) += kHex[digest[i] & 15];
  return hex;
}

// The lock huggingface_hub takes on a blob (flock on <cache>/.locks/<repo>/<etag>.lock), so the
// two never write one blob at once.
fs::path blob_lock_path(const HubSettings& settings, const HubRef& ref, const std::string& etag) {
  const fs::path path = fs::path(settings.cache_dir) / ".locks" / hf_repo_folder_name(ref.repo_id) / (etag + ".lock");
  fs::create_directories(path.parent_path());
  return path;
}

// One pull: the repository's files, fetched by `jobs` threads.
class Pull {
 public:
  Pull(const PullOptions& options, const HubSettings& settings, const PullProgress& progress)
      : options_(options), settings_(settings), progress_(progress),
        repo_dir_(fs::path(settings.cache_dir) / hf_repo_folder_name(options.ref.repo_id)) {}

  PullResult run() {
    HttpSession session(settings_.token);
    const std::string info_url = settings_.endpoint + "/api/models/" + options_.ref.repo_id + "/revision/" +
                                 url_encode(options_.ref.revision, true) + "?blobs=true";
    HttpReply info;
    try {
      info = with_retries([&] { return session.get(info_url); });
    } catch (const HostUnreachable& e) {
      fail(ErrorKind::kIo, where(options_.ref) + ": cannot reach the Hub at " + settings_.endpoint + " (" + e.what() +
                               "): check the network or HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use the cache only");
    }
    if (info.status != 200) fail_status(info, "the model's file list", options_.ref, settings_);
    Json json;
    try {
      json = Json::parse(info.body);
      result_.commit = json.at("sha").get<std::string>();
      for (const Json& sibling : json.at("siblings")) {
        const std::string path = sibling.at("rfilename").get<std::string>();
        if (!wanted(path)) continue;
        files_.push_back({path, "", sibling.value("size", int64_t{-1}), ""});
      }
    } catch (const Json::exception& e) {
      fail(ErrorKind::kIo, info_url + ": not the Hub's model info (" + e.what() + ")");
    }
    if (!is_hex(result_.commit, 40)) fail(ErrorKind::kIo, info_url + ": 'sha' is not a commit hash");
    if (files_.empty()) fail(ErrorKind::kUsage, where(options_.ref) + ": no file matches --include/--exclude");
    int64_t total = 0;
    for (const RemoteFile& file : files_) total += std::max<int64_t>(file.size, 0);
    report([&] { if (progress_.started) progress_.started(total, static_cast<int64_t>(files_.size())); });

    // Both folders at once, so that a pull stopped early leaves a cache huggingface_hub scans cleanly.
    result_.snapshot_dir = (repo_dir_ / "snapshots" / result_.commit).string();
    fs::create_directories(result_.snapshot_dir);
    fs::create_directories(repo_dir_ / "blobs");
    result_.files.resize(files_.size());
    std::vector<std::thread> workers;
    const int jobs = std::max(1, std::min<int>(options_.jobs, static_cast<int>(files_.size())));
    for (int i = 0; i < jobs; ++i) workers.emplace_back([this] { work(); });
    for (std::thread& worker : workers) worker.join();
    if (first_error_) std::rethrow_exception(first_error_);

    if (options_.ref.revision != result_.commit) {
      const fs::path ref = repo_dir_ / "refs" / options_.ref.revision;
      fs::create_directories(ref.parent_path());
      write_file_atomically(ref.string(), result_.commit);
    }
    result_.bytes_downloaded = downloaded_bytes_;
    return result_;
  }

 private:
  bool wanted(const std::string& path) const {
    const auto matches = [&](const std::vector<std::string>& patterns) {
      for (std::string pattern : patterns) {
        if (pattern.ends_with("/")) pattern += "*";  // a folder: everything in it
        if (::fnmatch(pattern.c_str(), path.c_str(), 0) == 0) return true;
      }
      return false;
    };
    return (options_.include.empty() || matches(options_.include)) && !matches(options_.exclude);
  }

  template <class Call>
  void report(const Call& call) {
    const std::lock_guard lock(progress_mutex_);
    call();
  }

  void work() {
    HttpSession session(settings_.token);
    for (size_t i = next_++; i < files_.size() && !stopped_; i = next_++) {
      try {
        result_.files[i] = fetch(session, files_[i]);
        report([&] { if (progress_.finished) progress_.finished(result_.files[i]); });
      } catch (...) {
        const std::lock_guard lock(error_mutex_);
        if (!first_error_) first_error_ = std::current_exception();
        stopped_ = true;
      }
    }
  }

  // The file's etag, size and download URL, from a HEAD that does not follow the redirect.
  void locate(HttpSession& session, RemoteFile& file) {
    const std::string url = settings_.endpoint + "/" + options_.ref.repo_id + "/resolve/" + result_.commit + "/" +
                            url_encode(file.path);
    const HttpReply reply = with_retries([&] { return session.head(url); });
    if (reply.status >= 400) fail_status(reply, "'" + file.path + "'", options_.ref, settings_);
    const bool redirect = reply.status >= 300 && reply.status < 400;
    // An LFS file's redirect carries the blob's etag and size in X-Linked-*; its own are the pointer's.
    const auto linked_or = [&](const std::string& linked, const std::string& own) {
      return reply.header(linked).empty() ? reply.header(own) : reply.header(linked);
    };
    file.etag = unquote_etag(linked_or("x-linked-etag", "etag"));
    const std::string size = linked_or("x-linked-size", "content-length");
    if (file.etag.empty() || file.etag.find('/') != std::string::npos || file.etag.starts_with("."))
      fail(ErrorKind::kIo, url + ": the Hub sent no usable ETag");
    try {
      file.size = std::stoll(size);
    } catch (const std::exception&) {
      fail(ErrorKind::kIo, url + ": the Hub sent no file size");
    }
    file.url = redirect && !reply.location.empty() ? reply.location : url;
  }

  PulledFile fetch(HttpSession& session, RemoteFile& file) {
    locate(session, file);
    const fs::path blob = repo_dir_ / "blobs" / file.etag;
    PulledFile pulled{file.path, file.size, false};
    {
      const FileLock lock(blob_lock_path(settings_, options_.ref, file.etag));
      std::error_code missing;
      if (fs::file_size(blob, missing) != static_cast<uintmax_t>(file.size) || missing) {
        download(session, file, blob);
        pulled.downloaded = true;
      }
    }
    const fs::path link = repo_dir_ / "snapshots" / result_.commit / file.path;
    fs::create_directories(link.parent_path());
    std::error_code absent;
    fs::remove(link, absent);
    fs::create_symlink(fs::relative(blob, link.parent_path()), link);
    return pulled;
  }

  // Fetches the blob into <blob>.incomplete, resuming what an earlier try left there, checks it
  // and gives it its name.
  void download(HttpSession& session, const RemoteFile& file, const fs::path& blob) {
    fs::create_directories(blob.parent_path());
    const std::string partial = blob.string() + ".incomplete";
    for (int attempt = 1;; ++attempt) {
      std::error_code missing;
      int64_t offset = static_cast<int64_t>(fs::file_size(partial, missing));
      if (missing || offset > file.size) offset = 0;
      if (offset < file.size || file.size == 0) {
        std::FILE* out = std::fopen(partial.c_str(), offset > 0 ? "ab" : "wb");
        if (!out) fail(ErrorKind::kIo, partial + ": cannot write (" + std::strerror(errno) + ")");
        std::optional<HttpReply> reply;
        std::string dropped;
        try {
          reply = session.download(file.url, offset, out, partial, [&](int64_t bytes) {
            report([&] { if (progress_.advanced) progress_.advanced(bytes); });
            downloaded_bytes_ += bytes;
          });
        } catch (const Error& e) {
          dropped = e.what();
        }
        std::fclose(out);
        if (!dropped.empty() && dropped.starts_with(partial))  // the disk, not the network
          fail(ErrorKind::kIo, dropped + " (make room and run again: the download resumes)");
        if (reply && reply->status >= 400 && reply->status < 500 && reply->status != 416)
          fail_status(*reply, "'" + file.path + "'", options_.ref, settings_);
        if (reply && offset > 0 && reply->status == 200) fs::resize_file(partial, 0);  // the Range was ignored
        if (!reply || reply->status >= 500 || fs::file_size(partial) < static_cast<uintmax_t>(file.size)) {
          if (attempt == kAttempts)
            fail(ErrorKind::kIo, where(options_.ref) + ": '" + file.path + "' stopped at " +
                                     std::to_string(fs::file_size(partial)) + " of " + std::to_string(file.size) +
                                     " bytes after " + std::to_string(kAttempts) + " tries (" +
                                     (dropped.empty() ? "HTTP " + std::to_string(reply ? reply->status : 0) : dropped) +
                                     "); run again to resume");
          std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
          continue;
        }
      }
      check(file, partial);
      fs::rename(partial, blob);
      return;
    }
  }

  // The downloaded bytes are the file the Hub named: its size, and its hash when the etag is one.
  void check(const RemoteFile& file, const std::string& partial) {
    const int64_t size = static_cast<int64_t>(fs::file_size(partial));
    std::string problem;
    if (size != file.size) {
      problem = std::to_string(size) + " bytes, expected " + std::to_string(file.size);
    } else if (const std::string digest = digest_like(file.etag, partial, size);
               !digest.empty() && digest != file.etag) {
      problem = "its hash is " + digest + ", expected " + file.etag;
    }
    if (problem.empty()) return;
    fs::remove(partial);
    fail(ErrorKind::kIo, where(options_.ref) + ": '" + file.path + "' arrived corrupt (" + problem +
                             "); the download was discarded, run again");
  }

  const PullOptions& options_;
  const HubSettings& settings_;
  const PullProgress& progress_;
  const fs::path repo_dir_;
  std::vector<RemoteFile> files_;
  PullResult result_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stopped_{false};
  std::atomic<int64_t> downloaded_bytes_{0};
  std::mutex progress_mutex_;
  std::mutex error_mutex_;
  std::exception_ptr first_error_;
};

// The pull `options` asks for, from the cache alone.
PullResult from_cache(const PullOptions& options, const HubSettings& settings, const std::string& why) {
  const std::optional<CachedSnapshot> snapshot = find_snapshot(settings.cache_dir, options.ref.repo_id,
                                                               options.ref.revision);
  if (!snapshot)
    fail(ErrorKind::kIo, where(options.ref) + " is not in the Hugging Face cache at " + settings.cache_dir + " and " +
                             why);
  PullResult result{snapshot->dir, snapshot->revision, {}, 0};
  for (const fs::directory_entry& item : fs::recursive_directory_iterator(snapshot->dir))
    if (item.is_regular_file())
      result.files.push_back({fs::relative(item.path(), snapshot->dir).string(),
                              static_cast<int64_t>(item.file_size()), false});
  return result;
}

}  // namespace

const std::vector<std::string>& default_hub_patterns() {
  static const std::vector<std::string> kPatterns = {"*.json", "*.safetensors", "*.jinja", "tokenizer.model"};
  return kPatterns;
}

HubSettings hub_settings_from_environment() {
  HubSettings settings;
  settings.endpoint = hf_env("HF_ENDPOINT").empty() ? "https://huggingface.co" : hf_env("HF_ENDPOINT");
  while (settings.endpoint.ends_with("/")) settings.endpoint.pop_back();
  settings.token = hf_env("HF_TOKEN");
  if (settings.token.empty()) {
    const std::string home = hf_env("HF_HOME").empty() ? hf_env("HOME") + "/.cache/huggingface" : hf_env("HF_HOME");
    const std::string path = hf_env("HF_TOKEN_PATH").empty() ? home + "/token" : hf_env("HF_TOKEN_PATH");
    std::ifstream in(path);
    std::getline(in, settings.token);
  }
  settings.cache_dir = hf_hub_cache_dir();
  std::string offline = hf_env("HF_HUB_OFFLINE");
  for (char& c : offline) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  settings.offline = offline == "1" || offline == "ON" || offline == "YES" || offline == "TRUE";
  return settings;
}

PullResult pull_model(const PullOptions& options, const HubSettings& settings, const PullProgress& progress) {
  if (options.jobs < 1) fail(ErrorKind::kUsage, "--jobs must be at least 1");
  if (settings.offline)
    return from_cache(options, settings, "HF_HUB_OFFLINE is set: pull it without HF_HUB_OFFLINE first");
  return Pull(options, settings, progress).run();
}

}  // namespace canrun
