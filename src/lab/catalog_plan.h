// A catalog model's core plan on a device profile, from its config alone (no weights): what
// `canrun catalog` lists and what the Space shows for models not checked yet.
#pragma once

#include <optional>
#include <string>

#include "lab/catalog.h"
#include "lab/device_profile.h"
#include "lab/planner.h"

namespace canrun {

// The profile plans are shown for when none is chosen: the reference migration target.
inline constexpr const char* kCatalogPlanProfile = "trn2";

struct PlannedEntry {
  CatalogEntry entry;
  std::optional<CorePlan> plan;  // none when the planner could not read the config
  ModelShape shape;
  std::string plan_error;
};

PlannedEntry plan_entry(const CatalogEntry& entry, const DeviceProfile& profile);

}  // namespace canrun
