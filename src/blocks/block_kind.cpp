#include "blocks/block_kind.h"

#include <map>

#include "util/error.h"

namespace canrun {
namespace {

std::map<std::string, BlockFactory>& registry() {
  static std::map<std::string, BlockFactory> kinds;  // built before first use
  return kinds;
}

}  // namespace

void register_block_kind(const std::string& kind, BlockFactory factory) { registry()[kind] = std::move(factory); }

std::vector<std::string> block_kinds() {
  std::vector<std::string> kinds;
  for (const auto& [kind, factory] : registry()) kinds.push_back(kind);
  return kinds;
}

std::unique_ptr<Block> make_block(const std::string& kind, const BlockPlace& place) {
  const auto it = registry().find(kind);
  if (it == registry().end()) {
    std::string known;
    for (const std::string& k : block_kinds()) known += (known.empty() ? "" : ", ") + k;
    fail(ErrorKind::kUnsupportedArchitecture, place.spec.model_type + ": layer " + std::to_string(place.layer) +
                                                  " needs block kind '" + kind + "' (known: " + known + ")");
  }
  return it->second(place);
}

}  // namespace canrun
