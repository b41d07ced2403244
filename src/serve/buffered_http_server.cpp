#include "serve/buffered_http_server.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace canrun {
namespace {

// Reads come from the received bytes, writes go to a string.
class ReceivedRequestStream : public httplib::Stream {
 public:
  explicit ReceivedRequestStream(const ReceivedRequest& request) : request_(request) {}

  bool is_readable() const override { return read_ < request_.bytes.size(); }

  // Hands what was written so far to the gate, so that a stream's piece goes out before the
  // provider waits for the next one.
  bool is_writable() const override {
    if (!request_.channel) return true;
    if (!reply_.empty() && !request_.channel->write(std::exchange(reply_, ""))) return false;
    return !request_.channel->closed();
  }

  // Past the received bytes there is nothing: the gate framed the whole request.
  ssize_t read(char* ptr, size_t size) override {
    if (read_ == request_.bytes.size()) return -1;
    const size_t n = std::min(size, request_.bytes.size() - read_);
    std::memcpy(ptr, request_.bytes.data() + read_, n);
    read_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    reply_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = request_.remote_ip;
    port = request_.remote_port;
  }

  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = request_.local_ip;
    port = request_.local_port;
  }

  socket_t socket() const override { return request_.fd; }

  std::string take_reply() { return std::move(reply_); }

 private:
  const ReceivedRequest& request_;
  size_t read_ = 0;
  mutable std::string reply_;  // written and not yet handed to the gate
};

}  // namespace

// httplib ends a streamed answer as soon as svr_sock_ is INVALID_SOCKET, its sign of a server
// shutting down. This server has no listening socket of its own; it shuts down with the gate.
BufferedHttpServer::BufferedHttpServer() { svr_sock_ = 0; }

GateReply BufferedHttpServer::answer(const ReceivedRequest& request) {
  ReceivedRequestStream stream(request);
  const bool last_request =
      !request.reusable || static_cast<size_t>(request.earlier_requests) + 1 >= keep_alive_max_count_;
  bool client_closes = false;
  // httplib calls this only once it has parsed the request line and headers; a request it
  // refused before (bad request line, URI over its limit) closes the connection.
  bool head_parsed = false;
  const bool written =
      process_request(stream, last_request, client_closes, [&head_parsed](httplib::Request&) { head_parsed = true; });
  return {stream.take_reply(), written && head_parsed && !last_request && !client_closes};
}

}  // namespace canrun
