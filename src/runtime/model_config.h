// What a model folder's config files say: config.json read by its family's architecture into
// a spec, and generation_config.json. Errors name the file and field at fault.
#pragma once

#include <string>

#include "checkpoint/generation_config.h"
#include "models/decoder_spec.h"

namespace canrun {

struct ModelConfig {
  DecoderSpec spec;
  GenerationConfig generation;
};

ModelConfig read_model_config(const std::string& model_dir);

// The spec config.json of `model_dir` describes, without reading anything else.
DecoderSpec read_model_spec(const std::string& model_dir);

}  // namespace canrun
