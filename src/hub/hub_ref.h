// A model on the Hub as a command line names it: "ORG/NAME" or "ORG/NAME@REVISION".
#pragma once

#include <optional>
#include <string>

namespace canrun {

struct HubRef {
  std::string repo_id;            // "ORG/NAME"
  std::string revision = "main";  // a branch, a tag or a commit
};

// Parses `text` by the Hub's rules for repository ids (huggingface_hub's validate_repo_id): two
// parts of letters, digits, '-', '_' and '.', at most 96 characters each, no "--" or "..", not
// starting or ending with '-' or '.'. Throws a usage error that quotes `text` and says the rule.
HubRef parse_hub_ref(const std::string& text);

// The parsed reference, or nullopt when `text` is not one (so it may be a folder path instead).
std::optional<HubRef> try_parse_hub_ref(const std::string& text);

}  // namespace canrun
