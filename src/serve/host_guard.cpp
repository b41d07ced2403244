#include "serve/host_guard.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>

#include <algorithm>

#include "util/error.h"

namespace canrun {
namespace {

struct HostAndPort {
  std::string host;
  bool has_port = false;
};

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_';
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_ipv6_address(const std::string& text) {
  in6_addr address;
  return inet_pton(AF_INET6, text.c_str(), &address) == 1;
}

std::optional<HostAndPort> split_host_and_port(std::string_view text) {
  HostAndPort result;
  std::string_view rest;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    result.host = std::string(text.substr(1, close - 1));
    if (!is_ipv6_address(result.host)) return std::nullopt;
    rest = text.substr(close + 1);
  } else {
    const size_t colon = text.find(':');
    result.host = std::string(text.substr(0, colon));
    if (result.host.empty() || !std::all_of(result.host.begin(), result.host.end(), is_name_character))
      return std::nullopt;
    if (colon != std::string_view::npos) rest = text.substr(colon);
  }
  if (!rest.empty()) {
    // ":" and up to five digits; an empty port is allowed by RFC 3986.
    if (rest[0] != ':' || rest.size() > 6 || !std::all_of(rest.begin() + 1, rest.end(), is_digit))
      return std::nullopt;
    result.has_port = true;
  }
  std::transform(result.host.begin(), result.host.end(), result.host.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  if (result.host.size() > 1 && result.host.ends_with('.')) result.host.pop_back();
  return result;
}

std::string shown(std::string_view value) {
  return std::string(value.substr(0, 100)) + (value.size() > 100 ? "..." : "");
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host.ends_with(".localhost")) return true;
  const std::string text(host);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

std::optional<std::string> host_of(std::string_view host_header) {
  auto parsed = split_host_and_port(host_header);
  if (!parsed) return std::nullopt;
  return std::move(parsed->host);
}

std::optional<std::string> allowed_host(std::string_view value) {
  // An IPv6 address may be given without brackets here: there is no port to tell apart.
  const bool bare_ipv6 = value.find(':') != value.rfind(':') && !value.starts_with('[');
  auto parsed = split_host_and_port(bare_ipv6 ? "[" + std::string(value) + "]" : std::string(value));
  if (!parsed || parsed->has_port) return std::nullopt;
  return std::move(parsed->host);
}

std::vector<std::string> checked_allowed_hosts(const std::vector<std::string>& values) {
  std::vector<std::string> hosts;
  for (const std::string& value : values) {
    std::optional<std::string> host = allowed_host(value);
    if (!host)
      fail(ErrorKind::kUsage, "--allow-host '" + value + "': not a host name or IP address (give it without a port)");
    hosts.push_back(std::move(*host));
  }
  return hosts;
}

HostGuard::HostGuard(bool enabled, const std::vector<std::string>& allowed_hosts)
    : enabled_(enabled), allowed_hosts_(allowed_hosts) {}

std::optional<HttpError> HostGuard::refusal(std::string_view host_header) const {
  if (!enabled_) return std::nullopt;
  const std::optional<std::string> host = host_of(host_header);
  if (!host) return HttpError(400, "Host header '" + shown(host_header) + "' is not a host name or address");
  if (is_loopback_host(*host) ||
      std::find(allowed_hosts_.begin(), allowed_hosts_.end(), *host) != allowed_hosts_.end())
    return std::nullopt;
  return HttpError(421, "Host '" + shown(host_header) +
                            "' is not answered: this server listens on a loopback address and answers only "
                            "localhost, *.localhost, 127.x.y.z and [::1] (start it with --allow-host NAME to add a "
                            "name)");
}

std::optional<HttpError> HostGuard::refusal(const httplib::Request& request) const {
  const size_t hosts = request.get_header_value_count("Host");
  if (hosts > 1) return HttpError(400, "more than one Host header");
  if (hosts == 0) {
    if (request.version == "HTTP/1.1") return HttpError(400, "an HTTP/1.1 request needs a Host header");
    return std::nullopt;
  }
  return refusal(request.get_header_value("Host"));
}

}  // namespace canrun
