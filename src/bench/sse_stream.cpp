#include "bench/sse_stream.h"

namespace canrun {

void SseStream::feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t start = 0;
  for (size_t end; (end = pending_.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string_view text(pending_.data() + start, end - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line(text);
  }
  pending_.erase(0, start);
}

void SseStream::finish() {
  if (!pending_.empty()) line(pending_);
  pending_.clear();
  dispatch();
}

// The event stream format (HTML living standard, 9.2.6): "field: value" or "field:value";
// lines starting with ':' are comments; only `data` matters here.
void SseStream::line(std::string_view text) {
  if (text.empty()) {
    dispatch();
    return;
  }
  if (text.front() == ':') return;
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

void SseStream::dispatch() {
  if (has_data_) on_data_(data_);
  data_.clear();
  has_data_ = false;
}

}  // namespace canrun
