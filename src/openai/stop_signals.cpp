#include "openai/stop_signals.h"

#include <pthread.h>

#include <csignal>
#include <ctime>
#include <iostream>
#include <utility>

namespace canrun {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  watcher_ = std::thread([this] { watch(); });
}

StopSignals::~StopSignals() {
  done_ = true;
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void StopSignals::on_stop(std::function<void()> stop) {
  std::lock_guard lock(mutex_);
  stop_ = std::move(stop);
}

void StopSignals::watch() {
  const timespec tick{0, 100'000'000};  // how soon the destructor's join returns
  bool draining = false;
  while (!done_) {
    const int received = sigtimedwait(&signals_, nullptr, &tick);
    if (received < 0) continue;
    std::function<void()> stop;
    {
      std::lock_guard lock(mutex_);
      stop = std::exchange(stop_, nullptr);
    }
    if (stop) {
      draining = true;
      stop();
      continue;
    }
    std::cerr << "canrun serve: " << (received == SIGINT ? "interrupted" : "terminated")
              << (draining ? " again while draining: stopping now" : " while loading the model") << std::endl;
    // The signal's default action, on this thread where it is unblocked: the process ends.
    std::signal(received, SIG_DFL);
    sigset_t just_this;
    sigemptyset(&just_this);
    sigaddset(&just_this, received);
    pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
    raise(received);
  }
}

}  // namespace canrun
