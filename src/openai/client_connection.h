// The socket of an HTTP request's connection, found by its two addresses, so that a handler that
// writes nothing until its end (a whole, non-streamed completion) can see its client leave:
// cpp-httplib gives a handler neither the socket nor a way to ask about it.
#pragma once

#include <optional>
#include <string>

namespace canrun {

class ClientConnection {
 public:
  // This process's TCP socket whose own address is local_addr:local_port and whose peer is
  // remote_addr:remote_port (numeric hosts, as the server reports them); none when not found.
  static std::optional<ClientConnection> find(const std::string& local_addr, int local_port,
                                              const std::string& remote_addr, int remote_port);

  // The client has closed its side of the connection or reset it. Reads nothing.
  bool closed() const;

 private:
  explicit ClientConnection(int fd) : fd_(fd) {}
  int fd_;  // owned by the HTTP server, open while its handler runs
};

}  // namespace canrun
