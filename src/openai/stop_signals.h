// SIGTERM and SIGINT for the model server, taken on a thread of their own at every point of its
// life. While the model loads there is nothing to drain and a load cannot be cut short, so a
// signal ends the process at once, as the signal's default action would. Once the server is up,
// the first signal calls its stop (draining) and a second one ends the process at once.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace canrun {

class StopSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread (and in the threads it starts from now on)
  // and watches them; construct it before any other thread starts.
  StopSignals();
  // Stops watching and restores the calling thread's signal mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // From now on the first signal calls `stop` instead of ending the process.
  void on_stop(std::function<void()> stop);

 private:
  void watch();

  sigset_t signals_;
  sigset_t previous_mask_;
  std::mutex mutex_;
  std::function<void()> stop_;  // empty while loading, and once called
  std::atomic<bool> done_ = false;
  std::thread watcher_;
};

}  // namespace canrun
