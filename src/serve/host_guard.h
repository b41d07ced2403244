// Which Host headers the servers (the Space, the model server) answer. A page on another site can
// point its own name at 127.0.0.1 (DNS rebinding) and then read the API through the visitor's
// browser; its requests carry that site's name in Host. So while a server listens on a loopback
// address it answers
// only loopback names and addresses and the names given with --allow-host. Listening on any
// other address means it is meant to be reached by other names, and the guard is off.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/http_error.h"

namespace httplib {
struct Request;
}

namespace canrun {

// localhost, *.localhost, 127.0.0.0/8, ::1 (and ::ffff:127.x.y.z); `host` without port or brackets.
bool is_loopback_host(std::string_view host);

// The host of a Host header value: lower case, without port, brackets or a trailing dot; null when
// it is not a host name or address with an optional port.
std::optional<std::string> host_of(std::string_view host_header);

// An --allow-host value as host_of gives it; null when it is malformed or names a port.
std::optional<std::string> allowed_host(std::string_view value);

// The --allow-host values as allowed_host gives them; throws a usage error naming a malformed one.
std::vector<std::string> checked_allowed_hosts(const std::vector<std::string>& values);

class HostGuard {
 public:
  // `allowed_hosts`: values already checked with allowed_host().
  HostGuard(bool enabled, const std::vector<std::string>& allowed_hosts);

  bool enabled() const { return enabled_; }

  // Null when a request with this Host header is answered; otherwise 400 for a malformed
  // header, 421 for a name that is not answered, with the reason.
  std::optional<HttpError> refusal(std::string_view host_header) const;

  // The same for a whole request: also 400 for several Host headers, or none in HTTP/1.1.
  std::optional<HttpError> refusal(const httplib::Request& request) const;

 private:
  bool enabled_;
  std::vector<std::string> allowed_hosts_;
};

}  // namespace canrun
