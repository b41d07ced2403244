#include "plan/http_errors.h"

namespace canrun {

std::string describe_http_error(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection: return "cannot connect";
    case httplib::Error::ConnectionTimeout: return "connection timed out";
    case httplib::Error::Read: return "error reading the response (or it timed out)";
    case httplib::Error::Write: return "error sending the request";
    case httplib::Error::ExceedRedirectCount: return "too many redirects";
    case httplib::Error::SSLConnection: return "TLS connection failed";
    case httplib::Error::SSLLoadingCerts: return "cannot load the CA certificates";
    case httplib::Error::SSLServerVerification: return "the server's TLS certificate did not verify";
    case httplib::Error::Canceled: return "the request was cancelled";
    default: return "request failed (" + httplib::to_string(error) + ")";
  }
}

}  // namespace canrun
