// generation_config.json beside a well-formed config.json (the llama fixture's).
#include "fuzz_support.h"
#include "runtime/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const canrun::fuzz::fs::path dir = [] {
    const canrun::fuzz::fs::path made = canrun::fuzz::scratch() / "model";
    canrun::fuzz::fs::create_directories(made);
    canrun::fuzz::fs::copy_file(canrun::fuzz::fs::path(CANRUN_SOURCE_DIR) / "tests/fixtures/models/llama_f32/config.json",
                                made / "config.json", canrun::fuzz::fs::copy_options::overwrite_existing);
    return made;
  }();
  canrun::fuzz::write_input("model/generation_config.json", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] { (void)canrun::read_model_config(dir.string()); });
  return 0;
}
