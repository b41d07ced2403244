// Generated text handed on as it grows, ending before the first stop string: a tail that may be
// the start of a stop string is held back until the next piece shows whether it is one.
#pragma once

#include <string>
#include <vector>

namespace canrun {

class StopStringFilter {
 public:
  explicit StopStringFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Adds `piece`; returns the text now safe to hand on (nothing once stopped).
  std::string push(const std::string& piece);
  // The generation ended without a stop string: what was held back.
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace canrun
