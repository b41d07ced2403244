// Uniform random floats in [-1, 1) for the kernel tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace canrun {

inline std::vector<float> random_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace canrun
