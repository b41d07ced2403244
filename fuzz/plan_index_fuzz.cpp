// A shared plan folder's <version>/index.json, as `cache pull` reads it.
#include "fuzz_support.h"
#include "util/version.h"
#include "plan/plan_cache.h"
#include "plan/plan_transfer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const canrun::fuzz::fs::path remote = canrun::fuzz::scratch() / "remote";
  canrun::fuzz::write_input(canrun::fuzz::fs::path("remote") / canrun::kVersion / "index.json", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const canrun::PlanCache cache(canrun::fuzz::scratch() / "pulled", canrun::kVersion);
    (void)canrun::pull_plans(cache, remote.string(), {{}, false});
  });
  return 0;
}
