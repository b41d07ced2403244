// What identifies a model for the plan cache: its config and its weights. The weights are
// identified by each safetensors file's name, size, modification time and header (names,
// dtypes, shapes, offsets), not by hashing every byte: hashing gigabytes would cost a warm start
// more than the plan saves. Rewriting a weight file changes its time, so a stale plan is never
// found for it.
#pragma once

#include <string>

namespace canrun {

// 32 hex chars of config.json's bytes.
std::string config_fingerprint(const std::string& model_dir);
// 32 hex chars over the folder's *.safetensors files (and model.safetensors.index.json).
std::string weights_fingerprint(const std::string& model_dir);

}  // namespace canrun
