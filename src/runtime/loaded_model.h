// A model folder as published on the Hub, loaded and ready to run.
#pragma once

#include <memory>
#include <string>

#include "checkpoint/generation_config.h"
#include "checkpoint/safetensors.h"
#include "runtime/decoder_model.h"

namespace canrun {

struct LoadedModel {
  std::string dir;
  std::unique_ptr<WeightStore> store;  // owns the mappings the weights may borrow
  GenerationConfig generation;
  DType stored_dtype = DType::kF32;
  std::unique_ptr<DecoderModel> model;
};

// Reads config.json (architecture from model_type), generation_config.json and the
// safetensors weights of `model_dir`, held as `backend` computes with them; sharded, only
// `comm`'s rank's part of them. Errors name the file and field at fault. Without
// `populate_weights` the weight files are read page by page as used: for a model whose
// matrices a compiled plan replaces.
LoadedModel load_model(const std::string& model_dir, Backend backend = Backend::kRef,
                       std::shared_ptr<Communicator> comm = single_process_communicator(),
                       bool populate_weights = true);

// The spec config.json of `model_dir` describes, without reading any weights.
DecoderSpec read_model_spec(const std::string& model_dir);

}  // namespace canrun
