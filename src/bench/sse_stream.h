// Server-sent events as OpenAI-compatible servers stream completions: the bytes arrive in pieces
// of any size; each event's `data:` lines, joined, are handed on once its blank line arrives.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace canrun {

class SseStream {
 public:
  // `on_data(payload)` gets each complete event's data (an event without data lines is skipped).
  explicit SseStream(std::function<void(const std::string& payload)> on_data) : on_data_(std::move(on_data)) {}

  void feed(std::string_view bytes);
  // The stream ended: an event its server did not close with a blank line still counts.
  void finish();

 private:
  void line(std::string_view text);
  void dispatch();

  std::function<void(const std::string&)> on_data_;
  std::string pending_;  // an incomplete line
  std::string data_;     // the current event's data lines
  bool has_data_ = false;
};

}  // namespace canrun
