// The Space's listening socket: bound to one address (the first of the host's that binds),
// non-blocking, with the kernel's largest accept backlog so that a burst of connections waits
// there for the connection gate instead of being dropped.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace canrun {

class Listener {
 public:
  // Null when no address of `host` can be bound on `port` (0: any free port).
  static std::optional<Listener> open(const std::string& host, int port);

  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&&) = delete;
  ~Listener();

  int fd() const { return fd_; }
  int port() const { return port_; }
  // The bound address, numeric ("127.0.0.1", "::1").
  const std::string& address() const { return address_; }

 private:
  Listener(int fd, int port, std::string address) : fd_(fd), port_(port), address_(std::move(address)) {}

  int fd_;
  int port_;
  std::string address_;
};

}  // namespace canrun
