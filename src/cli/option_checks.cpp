#include "cli/option_checks.h"

#include <filesystem>
#include <optional>
#include <string>

#include "lab/device_profile.h"
#include "util/error.h"
#include "util/number_text.h"

namespace canrun {
namespace {

// CLI11 names an option's value type INT, UINT or FLOAT (std::optional and lists included), with
// its checks' descriptions after a colon.
std::optional<NumberKind> number_kind(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const std::string base = type.substr(0, type.find(':'));
  if (base == "INT") return NumberKind::kSigned;
  if (base == "UINT") return NumberKind::kUnsigned;
  if (base == "FLOAT") return NumberKind::kReal;
  return std::nullopt;
}

}  // namespace

CLI::Validator number_check(NumberKind kind) {
  return CLI::Validator(
      [kind](std::string& input) -> std::string {
        const std::optional<std::string> problem = number_text_problem(input, kind);
        return problem ? "'" + input + "' " + *problem : "";
      },
      "");
}

void check_every_number(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (const std::optional<NumberKind> kind = number_kind(*option)) option->check(number_check(*kind));
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) check_every_number(*command);
}

CLI::Validator regular_file_check() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        std::error_code error;
        const std::filesystem::file_status status = std::filesystem::status(input, error);
        if (!std::filesystem::exists(status)) return "'" + input + "': no such file";
        if (!std::filesystem::is_regular_file(status))
          return "'" + input + "': not a regular file (a FIFO, device or folder)";
        return "";
      },
      "FILE");
}

CLI::Validator byte_size_check() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        try {
          parse_byte_size(input);
          return "";
        } catch (const Error& e) {
          return e.what();
        }
      },
      "SIZE");
}

CLI::Validator comma_list_check(const CLI::Validator& item) {
  return CLI::Validator(
      [item](std::string& input) -> std::string {
        for (std::string piece : comma_items(input)) {
          if (piece.empty()) return "'" + input + "' has an empty item (a comma at either end, or two together)";
          if (std::string problem = item(piece); !problem.empty()) return problem;
        }
        return "";
      },
      "LIST");
}

std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> items;
  for (size_t begin = 0;;) {
    const size_t comma = text.find(',', begin);
    items.push_back(text.substr(begin, comma - begin));
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

}  // namespace canrun
