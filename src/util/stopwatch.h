// Seconds elapsed on the steady clock: what loads, compiles, runs and checks report as their time.
#pragma once

#include <chrono>

namespace canrun {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace canrun
