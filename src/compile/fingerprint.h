// What identifies a model for the plan cache: its config and its weights, by content alone. A
// copy of a model in another folder, or the same files downloaded again, gives the same
// fingerprints and finds the same plans; neither paths nor times are part of them.
#pragma once

#include <filesystem>
#include <string>

namespace canrun {

// 32 hex chars of config.json's bytes.
std::string config_fingerprint(const std::string& model_dir);

// 32 hex chars over the folder's *.safetensors files (and model.safetensors.index.json): each
// file's name and the XXH3-128 of its bytes. Hashing gigabytes takes a while, so each file's
// digest is remembered in `memo_dir` under the file's identity (device, inode, size, modification
// and change times): it is read again only after one of those changes. An empty `memo_dir`
// remembers nothing.
std::string weights_fingerprint(const std::string& model_dir, const std::filesystem::path& memo_dir);

}  // namespace canrun
