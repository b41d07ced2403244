#include "openai/stop_strings.h"

#include <algorithm>

namespace canrun {

std::string StopStringFilter::push(const std::string& piece) {
  if (stopped_) return "";
  held_ += piece;
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // The longest tail of the held text that begins some stop string. A stop string begins with a
  // whole character, so the cut never splits one.
  size_t keep = 0;
  for (const std::string& stop : stops_)
    for (size_t length = std::min(stop.size() - 1, held_.size()); length > keep; --length)
      if (held_.compare(held_.size() - length, length, stop, 0, length) == 0) {
        keep = length;
        break;
      }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopStringFilter::finish() {
  if (stopped_) return "";
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace canrun
