// model.safetensors.index.json beside one well-formed shard: the weight map and its file names.
#include "checkpoint/safetensors.h"
#include "fuzz_support.h"

namespace {

// One F32 tensor "w" of shape [2] in model-00001-of-00001.safetensors.
const std::string& model_dir() {
  static const std::string dir = [] {
    const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    bytes += header + std::string(8, '\0');
    const std::string path = canrun::fuzz::write_input(
        "model/model-00001-of-00001.safetensors", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    return std::filesystem::path(path).parent_path().string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = model_dir();
  canrun::fuzz::write_input("model/model.safetensors.index.json", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const canrun::WeightStore store = canrun::WeightStore::open_folder(dir, false);
    (void)store.get("w", {2});
  });
  return 0;
}
