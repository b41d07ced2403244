#include "util/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace canrun {
namespace {

double seconds_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

ProgressStyle progress_style(bool quiet) {
  if (quiet) return ProgressStyle::kQuiet;
  return isatty(STDERR_FILENO) == 1 ? ProgressStyle::kBar : ProgressStyle::kLines;
}

std::string progress_bar(int64_t done, int64_t total, int width) {
  const int64_t filled = total > 0 ? std::min<int64_t>(width, width * std::max<int64_t>(done, 0) / total) : width;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(static_cast<size_t>(width), '.');
  return "[" + bar + "]";
}

ProgressLine::ProgressLine(std::string label, ProgressStyle style) : label_(std::move(label)), style_(style) {}

ProgressLine::~ProgressLine() { close(); }

void ProgressLine::close() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressLine::report(const std::string& step, int64_t done, int64_t total) {
  if (style_ == ProgressStyle::kQuiet) return;
  const auto now = std::chrono::steady_clock::now();
  const bool new_step = step != step_;
  if (new_step) {
    step_ = step;
    step_start_ = now;
  }
  if (style_ == ProgressStyle::kLines) {
    if (!new_step) return;
    std::fprintf(stderr, "%s: %s%s (at %.1f s)\n", label_.c_str(), step.c_str(),
                 total > 0 ? (" 0/" + std::to_string(total)).c_str() : "", seconds_between(start_, now));
    return;
  }
  const bool last = total > 0 && done >= total;
  if (!new_step && !last && seconds_between(last_draw_, now) < 0.1) return;
  last_draw_ = now;
  const std::string count = total > 0 ? " " + progress_bar(done, total) + " " + std::to_string(done) + "/" +
                                            std::to_string(total)
                                      : "";
  // \r and clear-to-end-of-line: the line is redrawn in place.
  std::fprintf(stderr, "\r\033[K%s: %s%s, %.1f s", label_.c_str(), step.c_str(), count.c_str(),
               seconds_between(step_start_, now));
  std::fflush(stderr);
  drawn_ = true;
}

ProgressReport ProgressLine::reporter() {
  return [this](const std::string& step, int64_t done, int64_t total) { report(step, done, total); };
}

}  // namespace canrun
