// HTTP(S) requests to the Hub through libcurl: one session (one connection pool) per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "util/error.h"

namespace canrun {

// The host could not be resolved or connected to: trying again at once would not help.
class HostUnreachable : public Error {
 public:
  using Error::Error;
};

struct HttpReply {
  long status = 0;
  std::map<std::string, std::string> headers;  // of the last response, names in lower case
  std::string body;                            // for get(); empty for head() and download()
  std::string location;                        // a redirect's target, made absolute
  std::string header(const std::string& name) const;
};

class HttpSession {
 public:
  // `token`, when not empty, goes as "Authorization: Bearer" to the host of each URL asked for
  // (libcurl drops it on a redirect to another host, as the Hub's CDN expects).
  explicit HttpSession(std::string token);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // A HEAD request that does not follow redirects. Throws kIo for a connection failure,
  // HostUnreachable when there is no connection to make.
  HttpReply head(const std::string& url);
  // A GET, following redirects, the body in memory (for small JSON answers).
  HttpReply get(const std::string& url);
  // A GET of bytes `offset`.. (a Range request when offset > 0), following redirects, appending
  // the body to `out` only when the status is 200 or 206; `on_bytes` hears of each chunk
  // written. A failed write stops the transfer and throws kIo with the file's error.
  HttpReply download(const std::string& url, int64_t offset, std::FILE* out, const std::string& out_path,
                     const std::function<void(int64_t)>& on_bytes);

 private:
  HttpReply perform(const std::string& url, bool head, bool follow, int64_t offset);
  void* curl_;
  std::string token_;
  // Where the body of the request in flight goes.
  std::string* body_sink_ = nullptr;
  std::FILE* file_sink_ = nullptr;
  const std::function<void(int64_t)>* on_bytes_ = nullptr;
  int write_errno_ = 0;
  HttpReply* reply_ = nullptr;
  friend size_t http_session_write(char*, size_t, size_t, void*);
  friend size_t http_session_header(char*, size_t, size_t, void*);
};

}  // namespace canrun
