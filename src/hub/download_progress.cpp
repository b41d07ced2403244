#include "hub/download_progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

namespace canrun {
namespace {

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

struct Bar {
  std::ostream& out;
  bool terminal;
  int64_t total = 0;
  int64_t files = 0;
  int64_t done_bytes = 0;
  int64_t done_files = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point drawn{};

  void draw(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - drawn < std::chrono::milliseconds(100)) return;
    drawn = now;
    const double seconds = std::chrono::duration<double>(now - start).count();
    constexpr int kWidth = 30;
    const int filled = total > 0 ? static_cast<int>(kWidth * std::min<double>(1.0, double(done_bytes) / total)) : 0;
    char speed[32];
    std::snprintf(speed, sizeof(speed), "%.1f MB/s", seconds > 0 ? done_bytes / 1e6 / seconds : 0.0);
    out << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] " << megabytes(done_bytes)
        << (total > 0 ? " / " + megabytes(total) : "") << "  " << speed << "  " << done_files << "/" << files
        << " files  " << std::flush;
  }
};

PullProgress download_progress(std::ostream& out, bool terminal) {
  auto bar = std::make_shared<Bar>(Bar{out, terminal});
  PullProgress progress;
  progress.started = [bar](int64_t total, int64_t files) {
    bar->total = total;
    bar->files = files;
    if (!bar->terminal) bar->out << "fetching " << files << " files (" << megabytes(total) << ")\n";
  };
  progress.advanced = [bar](int64_t bytes) {
    bar->done_bytes += bytes;
    if (bar->terminal) bar->draw(false);
  };
  progress.finished = [bar](const PulledFile& file) {
    ++bar->done_files;
    if (bar->terminal) {
      bar->draw(true);
      if (bar->done_files == bar->files) bar->out << "\n";
    } else {
      bar->out << (file.downloaded ? "fetched " : "cached  ") << file.path << " (" << megabytes(file.size) << ")\n";
    }
  };
  return progress;
}

}  // namespace

PullResult pull_with_progress(const PullOptions& options, const HubSettings& settings) {
  return pull_model(options, settings, download_progress(std::cerr, isatty(STDERR_FILENO) == 1));
}

}  // namespace canrun
