// Rotary position embedding parameters as transformers reads them from a config,
// in either spelling: rope_parameters (transformers 5) or rope_theta + rope_scaling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/config_reader.h"

namespace canrun {

struct RopeSpec {
  std::string type = "default";  // default | linear | llama3
  double theta = 10000.0;
  int64_t rotary_dim = 0;  // leading dims of each head that rotate
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_positions = 0;
};

RopeSpec read_rope_spec(const ConfigReader& config, int64_t rotary_dim, double default_theta);

// inv_freq[i] for i < rotary_dim/2, computed in f32 like transformers' rope init functions.
std::vector<float> rope_inverse_frequencies(const RopeSpec& spec);

}  // namespace canrun
