#include "cli/model_argument.h"

#include "hub/model_folder.h"

namespace canrun {

CLI::Validator hub_model_folder() {
  return CLI::Validator(
      [](std::string& value) {
        value = resolve_model_folder(value);
        return std::string();
      },
      "PATH or ORG/NAME[@REVISION]", "hub model folder");
}

}  // namespace canrun
