// Checks of option values shared by the subcommands; CLI11 names the option in front of each
// message. Every numeric option of every subcommand is read one way (util/number_text.h): the
// whole value a finite number of the option's type, so `--max-body-mib nan`, `--timeout ''` or
// `--seed -1` are usage errors naming the option instead of settings that disable a bound.
// Ranges stay with each option (CLI::Range and friends).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "util/number_text.h"

namespace canrun {

// Adds the check to each option of `app` and its subcommands, at any depth, whose value is a
// number or a list of numbers; call it once every option is added.
void check_every_number(CLI::App& app);

// The check check_every_number adds: the value is a number of `kind`.
CLI::Validator number_check(NumberKind kind);

// The value names an existing regular file (or a link to one): a FIFO in its place would block
// the read forever, a device or folder is no input either.
CLI::Validator regular_file_check();

// An option's value as a size such as "16 GiB" (lab/device_profile.h's parse_byte_size).
CLI::Validator byte_size_check();

// A comma-separated list given as one value, each item passing `item` (another check, or none).
// CLI11's own delimiter drops a trailing comma silently; here "1,2," or "1,,2" is refused.
CLI::Validator comma_list_check(const CLI::Validator& item = CLI::Validator());
// The items of a value comma_list_check accepted.
std::vector<std::string> comma_items(const std::string& text);

}  // namespace canrun
