#include "lab/catalog_plan.h"

namespace canrun {

PlannedEntry plan_entry(const CatalogEntry& entry, const DeviceProfile& profile) {
  PlannedEntry planned{entry, std::nullopt, {}, ""};
  try {
    planned.shape = model_shape(hf_config(entry), published_parameters(entry));
    planned.plan = plan_cores(planned.shape, profile, PlannerOptions{});
  } catch (const Error& e) {
    planned.plan_error = e.what();
  }
  return planned;
}

}  // namespace canrun
