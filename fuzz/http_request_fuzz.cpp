// Bytes a client sends to the Space: framed as the connection gate frames them (head, then a
// Content-Length body), then, when a request is complete, parsed and routed by httplib over the
// received bytes as the workers do, with the Host guard of a loopback listener in front. What
// follows a request is framed again as the next one on the same connection.
#include "fuzz_support.h"
#include "serve/buffered_http_server.h"
#include "serve/host_guard.h"
#include "serve/request_framing.h"

namespace {

canrun::BufferedHttpServer& server() {
  static canrun::BufferedHttpServer* made = [] {
    static const canrun::HostGuard guard(true, {"space.example"});
    auto* s = new canrun::BufferedHttpServer;
    s->set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
      if (const auto error = guard.refusal(request.get_header_value("Host"))) {
        response.status = error->status();
        response.set_content(error->what(), "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    s->Get(".*", [](const httplib::Request& request, httplib::Response& response) {
      response.set_content(request.path + " " + std::to_string(request.params.size()), "text/plain");
    });
    return s;
  }();
  return *made;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view received(reinterpret_cast<const char*>(data), size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    for (int earlier = 0; !received.empty(); ++earlier) {
      const canrun::RequestFraming framing = canrun::frame_request(received, 32 * 1024, 64 * 1024);
      (void)canrun::request_method(received);
      if (framing.status != canrun::RequestFraming::Status::kComplete) return;
      if (framing.length == 0 || framing.length > received.size()) std::abort();  // the framing's own promise
      const canrun::ReceivedRequest request{std::string(received.substr(0, framing.length)), framing.reusable, earlier,
                                            -1, "127.0.0.1", 40000, "127.0.0.1", 8080};
      const canrun::GateReply reply = server().answer(request);
      if (!reply.keep_alive) return;
      received.remove_prefix(framing.length);
    }
  });
  return 0;
}
