#include "hub/http_session.h"

#include <curl/curl.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "util/error.h"
#include "util/version.h"

namespace canrun {
namespace {

CURL* handle(void* curl) { return static_cast<CURL*>(curl); }

bool ok_body(long status) { return status == 200 || status == 206; }

}  // namespace

size_t http_session_write(char* data, size_t size, size_t count, void* user) {
  auto* session = static_cast<HttpSession*>(user);
  const size_t bytes = size * count;
  if (session->body_sink_) {
    session->body_sink_->append(data, bytes);
    return bytes;
  }
  long status = 0;
  curl_easy_getinfo(handle(session->curl_), CURLINFO_RESPONSE_CODE, &status);
  if (!ok_body(status)) return bytes;  // an error page or a redirect's body: not the file
  if (std::fwrite(data, 1, bytes, session->file_sink_) != bytes) {
    session->write_errno_ = errno ? errno : EIO;
    return 0;  // stops the transfer with CURLE_WRITE_ERROR
  }
  if (*session->on_bytes_) (*session->on_bytes_)(static_cast<int64_t>(bytes));
  return bytes;
}

size_t http_session_header(char* data, size_t size, size_t count, void* user) {
  auto* session = static_cast<HttpSession*>(user);
  const size_t bytes = size * count;
  std::string line(data, bytes);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.starts_with("HTTP/")) {
    session->reply_->headers.clear();  // a new response of a redirect chain
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return bytes;
  std::string name = line.substr(0, colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t value = colon + 1;
  while (value < line.size() && line[value] == ' ') ++value;
  session->reply_->headers[name] = line.substr(value);
  return bytes;
}

std::string HttpReply::header(const std::string& name) const {
  const auto found = headers.find(name);
  return found == headers.end() ? "" : found->second;
}

HttpSession::HttpSession(std::string token) : token_(std::move(token)) {
  static std::once_flag global;
  std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_ = curl_easy_init();
  if (!curl_) fail(ErrorKind::kIo, "libcurl: cannot start an HTTP session");
}

HttpSession::~HttpSession() { curl_easy_cleanup(handle(curl_)); }

HttpReply HttpSession::perform(const std::string& url, bool head, bool follow, int64_t offset) {
  CURL* curl = handle(curl_);
  curl_easy_reset(curl);
  HttpReply reply;
  reply_ = &reply;
  write_errno_ = 0;
  const std::string agent = std::string("canrun/") + kVersion;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_USERAGENT, agent.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  // A transfer that moves less than a byte a second for 30 s has stalled.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
  curl_easy_setopt(curl, CURLOPT_NOBODY, head ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_session_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, http_session_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, this);
  const std::string range = std::to_string(offset) + "-";
  if (offset > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  curl_slist* headers = curl_slist_append(nullptr, "Accept-Encoding: identity");  // sizes and hashes of the bytes
  if (!token_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  reply_ = nullptr;
  if (code == CURLE_WRITE_ERROR && write_errno_ != 0) fail(ErrorKind::kIo, std::strerror(write_errno_));
  if (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_COULDNT_CONNECT)
    throw HostUnreachable(ErrorKind::kIo, url + ": " + curl_easy_strerror(code));
  if (code != CURLE_OK) fail(ErrorKind::kIo, url + ": " + curl_easy_strerror(code));
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  char* location = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location) reply.location = location;
  return reply;
}

HttpReply HttpSession::head(const std::string& url) {
  body_sink_ = nullptr;
  return perform(url, true, false, 0);
}

HttpReply HttpSession::get(const std::string& url) {
  std::string body;
  body_sink_ = &body;
  HttpReply reply = perform(url, false, true, 0);
  body_sink_ = nullptr;
  reply.body = std::move(body);
  return reply;
}

HttpReply HttpSession::download(const std::string& url, int64_t offset, std::FILE* out, const std::string& out_path,
                                const std::function<void(int64_t)>& on_bytes) {
  body_sink_ = nullptr;
  file_sink_ = out;
  on_bytes_ = &on_bytes;
  try {
    HttpReply reply = perform(url, false, true, offset);
    if (std::fflush(out) != 0) fail(ErrorKind::kIo, out_path + ": " + std::strerror(errno));
    return reply;
  } catch (const Error& e) {
    if (write_errno_ != 0) fail(ErrorKind::kIo, out_path + ": " + e.what());
    throw;
  }
}

}  // namespace canrun
