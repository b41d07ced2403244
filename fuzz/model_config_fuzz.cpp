// config.json through the family readers (model_type picks one), with the generation settings a
// config without generation_config.json carries.
#include "fuzz_support.h"
#include "runtime/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = canrun::fuzz::write_input("model/config.json", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors(
      [&] { (void)canrun::read_model_config(std::filesystem::path(path).parent_path().string()); });
  return 0;
}
