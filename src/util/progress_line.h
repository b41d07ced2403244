// Long work (a check, a bench, a cold compile) says on stderr what it is doing and how far
// along: on a terminal one line redrawn in place, with a bar when the amount is known; otherwise
// a plain line as each step starts (logs, CI); nothing at all when quiet (--json).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace canrun {

enum class ProgressStyle { kQuiet, kBar, kLines };

// kQuiet when `quiet`, else kBar on a terminal, kLines otherwise.
ProgressStyle progress_style(bool quiet);

// "[#########.....................]": `done` of `total` in `width` characters.
std::string progress_bar(int64_t done, int64_t total, int width = 30);

// Reports steps of work as they go; `done` of `total` items (total 0: not counted).
using ProgressReport = std::function<void(const std::string& step, int64_t done, int64_t total)>;

class ProgressLine {
 public:
  // `label` leads every line, e.g. "check SmolLM2-135M-Instruct".
  ProgressLine(std::string label, ProgressStyle style);
  ~ProgressLine();  // close()
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // A step starting (done 0) or going on: a plain line when a step starts, a redrawn bar on a
  // terminal (at most ten times a second, and at the step's end).
  void report(const std::string& step, int64_t done = 0, int64_t total = 0);
  // report() as a ProgressReport for lower layers; this object must outlive it.
  ProgressReport reporter();
  // Clears a bar's line, so that what is printed next starts on a clean line; the next report
  // draws it again.
  void close();

 private:
  std::string label_;
  ProgressStyle style_;
  std::string step_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point step_start_ = start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace canrun
