#include "serve/request_framing.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace canrun {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Digits only, and small enough to add to a buffer offset without overflow.
std::optional<size_t> parse_length(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  size_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  return value;
}

}  // namespace

RequestFraming frame_request(std::string_view received, size_t max_head_bytes, size_t max_body_bytes) {
  const size_t blank_line = received.find("\r\n\r\n");
  if (blank_line == std::string_view::npos) {
    const bool head_fits = received.size() < max_head_bytes;
    return {head_fits ? RequestFraming::Status::kIncomplete : RequestFraming::Status::kHeadTooLarge, 0, false};
  }
  const size_t head_length = blank_line + 4;
  if (head_length > max_head_bytes) return {RequestFraming::Status::kHeadTooLarge, 0, false};

  // The header lines after the request line.
  std::string_view headers = received.substr(0, blank_line + 2);
  headers.remove_prefix(std::min(headers.size(), headers.find("\r\n") + 2));
  int content_lengths = 0;
  std::optional<size_t> content_length = 0;
  bool chunked_or_other_coding = false;
  while (!headers.empty()) {
    const size_t end = headers.find("\r\n");
    const std::string_view line = headers.substr(0, end);
    headers.remove_prefix(end + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    if (equals_ignoring_case(name, "Content-Length")) {
      ++content_lengths;
      content_length = parse_length(trim(line.substr(colon + 1)));
    } else if (equals_ignoring_case(name, "Transfer-Encoding")) {
      chunked_or_other_coding = true;
    }
  }

  if (chunked_or_other_coding || content_lengths > 1 || !content_length || *content_length > max_body_bytes)
    return {RequestFraming::Status::kComplete, head_length, false};
  if (received.size() < head_length + *content_length) return {RequestFraming::Status::kIncomplete, 0, true};
  return {RequestFraming::Status::kComplete, head_length + *content_length, true};
}

std::string_view request_method(std::string_view request) {
  const auto is_token_character = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  };
  const size_t end = request.find(' ');
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view method = request.substr(0, end);
  return std::all_of(method.begin(), method.end(), is_token_character) ? method : std::string_view();
}

}  // namespace canrun
