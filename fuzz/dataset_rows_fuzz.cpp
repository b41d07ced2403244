// A dataset Parquet file (one version pair's rows), as the Space and `canrun query` read it.
#include "fuzz_support.h"
#include "lab/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = canrun::fuzz::write_input("rows.parquet", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    for (const canrun::ResultRow& row : canrun::read_dataset(path)) (void)canrun::row_to_json(row).dump();
  });
  return 0;
}
