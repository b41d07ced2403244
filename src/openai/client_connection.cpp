#include "openai/client_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

namespace canrun {
namespace {

struct Endpoint {
  std::string host;
  int port = -1;
};

// The numeric host and port of an IPv4 or IPv6 address; none for other families.
std::optional<Endpoint> endpoint_of(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    if (!inet_ntop(AF_INET, &in.sin_addr, host, sizeof host)) return std::nullopt;
    return Endpoint{host, ntohs(in.sin_port)};
  }
  if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    if (!inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host)) return std::nullopt;
    return Endpoint{host, ntohs(in6.sin6_port)};
  }
  return std::nullopt;
}

bool is_at(std::optional<Endpoint> endpoint, const std::string& host, int port) {
  return endpoint && endpoint->port == port && endpoint->host == host;
}

}  // namespace

std::optional<ClientConnection> ClientConnection::find(const std::string& local_addr, int local_port,
                                                       const std::string& remote_addr, int remote_port) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    const std::string name = entry.path().filename().string();
    int fd = -1;
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
    sockaddr_storage own{}, peer{};
    socklen_t own_length = sizeof own, peer_length = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&own), &own_length) != 0) continue;  // not a socket
    if (!is_at(endpoint_of(own), local_addr, local_port)) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0) continue;
    if (is_at(endpoint_of(peer), remote_addr, remote_port)) return ClientConnection(fd);
  }
  return std::nullopt;
}

bool ClientConnection::closed() const {
  char byte;
  const ssize_t peeked = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (peeked == 0) return true;  // the client's end of stream
  return peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace canrun
