#include "plan/plan_key.h"

#include <array>
#include <utility>

#include "plan/checksum.h"

namespace canrun {
namespace {

// Every field with its JSON name, so to_json and from_json cannot drift apart.
std::array<std::pair<const char*, std::string PlanKey::*>, 9> fields() {
  return {{{"kind", &PlanKey::kind},
           {"compiler_version", &PlanKey::compiler_version},
           {"isa", &PlanKey::isa},
           {"backend", &PlanKey::backend},
           {"config_fingerprint", &PlanKey::config_fingerprint},
           {"weights_fingerprint", &PlanKey::weights_fingerprint},
           {"shapes", &PlanKey::shapes},
           {"shard", &PlanKey::shard},
           {"program", &PlanKey::program}}};
}

}  // namespace

Json PlanKey::to_json() const {
  Json json = Json::object();
  for (const auto& [name, member] : fields()) json[name] = this->*member;
  return json;
}

PlanKey PlanKey::from_json(const Json& json, const std::string& where) {
  if (!json.is_object()) fail(ErrorKind::kIo, where + ": plan key is not a JSON object");
  PlanKey key;
  for (const auto& [name, member] : fields()) {
    const auto it = json.find(name);
    if (it == json.end() || !it->is_string())
      fail(ErrorKind::kIo, where + ": plan key field \"" + name + "\" is missing or not a string");
    key.*member = it->get<std::string>();
  }
  return key;
}

std::string PlanKey::digest() const {
  // nlohmann::json keeps object keys sorted, so dump() is canonical.
  return xxh3_128_hex(to_json().dump());
}

bool is_plan_digest(const std::string& text) {
  if (text.size() != 32) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace canrun
