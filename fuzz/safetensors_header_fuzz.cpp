// A safetensors file as the loader opens it: the 8-byte length, the JSON header, the data.
#include "checkpoint/safetensors.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = canrun::fuzz::write_input("model.safetensors", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const auto file = canrun::SafetensorsFile::open(path, false);
    for (const auto& [name, record] : file->tensors()) (void)record.numel();
  });
  return 0;
}
