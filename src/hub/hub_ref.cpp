#include "hub/hub_ref.h"

#include <cctype>

#include "util/error.h"

namespace canrun {
namespace {

// Why `part` cannot be half of a repository id, or "" when it can.
std::string bad_part(const std::string& part) {
  if (part.empty() || part.size() > 96) return "each part has 1 to 96 characters";
  for (const char c : part)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return "only letters, digits, '-', '_' and '.' may appear";
  if (part.find("--") != std::string::npos || part.find("..") != std::string::npos)
    return "\"--\" and \"..\" are not allowed";
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
    return "a part cannot start or end with '-' or '.'";
  return "";
}

// Why `text` is not a Hub reference, or "" with `ref` filled when it is.
std::string parse(const std::string& text, HubRef& ref) {
  const size_t at = text.find('@');
  const std::string id = text.substr(0, at);
  if (at != std::string::npos) {
    ref.revision = text.substr(at + 1);
    if (ref.revision.empty() || ref.revision.find_first_of(" \t\n@\\") != std::string::npos)
      return "the revision after '@' is a branch, tag or commit, without spaces";
    // It names a file below refs/ of the cache: no part may climb out of it.
    for (size_t begin = 0;;) {
      const size_t slash = ref.revision.find('/', begin);
      const std::string part = ref.revision.substr(begin, slash - begin);
      if (part.empty() || part == "." || part == "..")
        return "the revision after '@' has an empty, '.' or '..' part between slashes";
      if (slash == std::string::npos) break;
      begin = slash + 1;
    }
  }
  const size_t slash = id.find('/');
  if (slash == std::string::npos || id.find('/', slash + 1) != std::string::npos) return "expected ORG/NAME[@REVISION]";
  for (const std::string& part : {id.substr(0, slash), id.substr(slash + 1)})
    if (std::string why = bad_part(part); !why.empty()) return why;
  if (id.ends_with(".git")) return "a repository id does not end with .git";
  ref.repo_id = id;
  return "";
}

}  // namespace

HubRef parse_hub_ref(const std::string& text) {
  HubRef ref;
  if (const std::string why = parse(text, ref); !why.empty())
    fail(ErrorKind::kUsage, "'" + text + "' is not a Hub model id: " + why);
  return ref;
}

std::optional<HubRef> try_parse_hub_ref(const std::string& text) {
  HubRef ref;
  if (!parse(text, ref).empty()) return std::nullopt;
  return ref;
}

}  // namespace canrun
