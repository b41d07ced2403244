// The sweep's progress on stderr: a bar with counts and ETA redrawn in place on a terminal,
// one line per finished model otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace canrun {

class SweepProgress {
 public:
  SweepProgress(int64_t total, bool terminal);
  void started(const std::string& model_id);
  void finished(const std::string& model_id, const std::string& result, double seconds);
  void close();  // ends the bar's line

 private:
  void draw();
  std::string eta() const;

  int64_t total_;
  int64_t done_ = 0;
  int64_t running_ = 0;
  bool terminal_;
  std::string last_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace canrun
