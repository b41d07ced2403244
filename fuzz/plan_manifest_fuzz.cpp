// A plan-cache entry's manifest.json, as `cache ls --verify`, `cache prune --dry-run` and a
// lookup read it. The entry's folder is named by the digest of the key the manifest holds when
// it holds one, so the checks after the key's (the listed files) are reached too.
#include "fuzz_support.h"
#include "util/version.h"
#include "plan/plan_cache.h"
#include "util/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const canrun::PlanKey fixed{"graph", canrun::kVersion, "x86_64", "cpu", "config", "weights", "shapes", "", "program"};
  canrun::PlanKey key = fixed;
  try {
    const canrun::Json manifest = canrun::parse_json(std::string_view(reinterpret_cast<const char*>(data), size),
                                                     "manifest.json", canrun::ErrorKind::kIo);
    key = canrun::PlanKey::from_json(manifest.at("key"), "manifest.json");
    if (key.compiler_version != canrun::kVersion) key = fixed;
  } catch (const std::exception&) {
  }
  const canrun::fuzz::fs::path root = canrun::fuzz::scratch() / "plans";
  canrun::fuzz::fs::remove_all(root);
  canrun::fuzz::write_input(canrun::fuzz::fs::path("plans") / canrun::kVersion / key.digest() / "manifest.json", data, size);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const canrun::PlanCache cache(root, canrun::kVersion);
    (void)cache.list(true, true);
    (void)cache.prune({std::nullopt, std::nullopt, true});
    (void)cache.find(key);
  });
  return 0;
}
