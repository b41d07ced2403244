#include "lab/progress.h"

#include <cstdio>

#include "util/progress_line.h"

namespace canrun {

SweepProgress::SweepProgress(int64_t total, bool terminal) : total_(total), terminal_(terminal) {}

void SweepProgress::started(const std::string& model_id) {
  ++running_;
  last_ = "running " + model_id;
  if (terminal_) draw();
}

void SweepProgress::finished(const std::string& model_id, const std::string& result, double seconds) {
  ++done_;
  if (running_ > 0) --running_;
  char line[512];
  std::snprintf(line, sizeof(line), "[%lld/%lld] %s: %s (%.1f s)", static_cast<long long>(done_),
                static_cast<long long>(total_), model_id.c_str(), result.c_str(), seconds);
  if (!terminal_) {
    std::fprintf(stderr, "%s ETA %s\n", line, eta().c_str());
    return;
  }
  last_ = line;
  draw();
}

void SweepProgress::close() {
  if (terminal_) std::fprintf(stderr, "\n");
}

std::string SweepProgress::eta() const {
  if (done_ == 0) return "?";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const long long left = static_cast<long long>(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  char text[32];
  std::snprintf(text, sizeof(text), "%lldm%02llds", left / 60, left % 60);
  return text;
}

void SweepProgress::draw() {
  // \r and clear-to-end-of-line: the bar is redrawn in place.
  std::fprintf(stderr, "\r\033[K%s %lld/%lld, %lld running, ETA %s | %s", progress_bar(done_, total_).c_str(),
               static_cast<long long>(done_), static_cast<long long>(total_), static_cast<long long>(running_),
               eta().c_str(), last_.substr(0, 80).c_str());
  std::fflush(stderr);
}

}  // namespace canrun
