#include "serve/listener.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace canrun {
namespace {

// The socket bound to one resolved address, or -1.
int bind_one(const addrinfo& info) {
  const int fd = socket(info.ai_family, info.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, info.ai_protocol);
  if (fd < 0) return -1;
  // No SO_REUSEPORT: it would let a second server share a busy port.
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (bind(fd, info.ai_addr, info.ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) return fd;
  close(fd);
  return -1;
}

}  // namespace

std::optional<Listener> Listener::open(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* resolved = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &resolved) != 0) return std::nullopt;
  int fd = -1;
  for (const addrinfo* info = resolved; info != nullptr && fd < 0; info = info->ai_next) fd = bind_one(*info);
  freeaddrinfo(resolved);
  if (fd < 0) return std::nullopt;

  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  char address[NI_MAXHOST] = "";
  char service[NI_MAXSERV] = "";
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0 ||
      getnameinfo(reinterpret_cast<sockaddr*>(&bound), length, address, sizeof(address), service, sizeof(service),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    close(fd);
    return std::nullopt;
  }
  return Listener(fd, std::stoi(service), address);
}

Listener::Listener(Listener&& other) noexcept : fd_(other.fd_), port_(other.port_), address_(std::move(other.address_)) {
  other.fd_ = -1;
}

Listener::~Listener() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace canrun
