// Rotary position embedding parameters as transformers reads them from a config,
// in either spelling: rope_parameters (transformers 5) or rope_theta + rope_scaling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/config_reader.h"

namespace canrun {

struct RopeSpec {
  std::string type = "default";  // default | linear | dynamic | yarn | longrope | llama3 | proportional
  double theta = 10000.0;
  int64_t rotary_dim = 0;  // leading dims of each head that rotate
  // proportional (gemma4): the whole head rotates in halves, but only the first rotated_pairs
  // frequencies are nonzero, base^(-2i / head_dim); the other pairs keep their values.
  int64_t rotated_pairs = 0;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_positions = 0;
  int64_t max_positions = 0;      // the config's max_position_embeddings (dynamic, yarn, longrope)
  double attention_factor = 1.0;  // multiplies cos and sin (yarn, longrope)
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn
  bool truncate = true;                      // yarn
  std::vector<double> short_factor, long_factor;  // longrope
  // M-RoPE: the frequencies' (t, h, w) positions. Interleaved (qwen3_vl): frequency i takes the
  // height position when i % 3 == 1 and i < 3 * mrope_section[1], the width position when
  // i % 3 == 2 and i < 3 * mrope_section[2], else the temporal one; in sections (qwen2_vl): the
  // first mrope_section[0] frequencies the temporal, the next [1] the height, the rest the width.
  // Empty: one position for all.
  std::vector<int64_t> mrope_section;
  bool mrope_interleaved = true;
};

// What a family's config class supplies when the config.json omits it.
struct RopeDefaults {
  double theta = 10000.0;
  double partial_rotary_factor = 1.0;
  int64_t max_positions = 0;
  // Fields some families spell differently at the top level (gpt_neox: rotary_emb_base, rotary_pct).
  std::string theta_key = "rope_theta";
  std::string partial_key = "partial_rotary_factor";
  // Phi3 keeps the pretraining length at the top level and gives it priority.
  bool top_level_original_max = false;
  int64_t default_original_max = 0;  // phi3's config default (4096); 0: none
  bool yarn_is_longrope = false;     // phi3 reads "su" and "yarn" as longrope
};

// rotary_dim = int(head_dim * partial_rotary_factor). `rope_parameters` (or rope_scaling) may be
// given explicitly, e.g. one of gemma3's per-layer-type entries.
RopeSpec read_rope_spec(const ConfigReader& config, int64_t head_dim, const RopeDefaults& defaults);
RopeSpec read_rope_spec(const ConfigReader& config, int64_t head_dim, double default_theta);
RopeSpec read_rope_parameters(const ConfigReader& config, const ConfigReader* params, int64_t head_dim,
                              const RopeDefaults& defaults);

// inv_freq[i] for i < rotary_dim/2, computed in f32 like transformers' rope init functions.
// seq_len is the length transformers sees in the forward call (max position + 1): longrope
// picks its long factors past the pretraining length, dynamic rescales its base past
// max_position_embeddings; 0 means "at initialisation".
std::vector<float> rope_inverse_frequencies(const RopeSpec& spec, int64_t seq_len = 0);

// True when the frequencies depend on the sequence length (longrope, dynamic).
bool rope_depends_on_length(const RopeSpec& spec);

}  // namespace canrun
