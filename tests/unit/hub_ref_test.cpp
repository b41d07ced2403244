// Hub ids as a command line gives them, by the Hub's rules for repository ids.
#include <gtest/gtest.h>

#include "hub/hub_ref.h"
#include "util/error.h"

namespace canrun {
namespace {

TEST(HubRef, ReadsAnIdAndItsRevision) {
  const HubRef plain = parse_hub_ref("Qwen/Qwen3-0.6B");
  EXPECT_EQ(plain.repo_id, "Qwen/Qwen3-0.6B");
  EXPECT_EQ(plain.revision, "main");
  const HubRef pinned = parse_hub_ref("meta-llama/Llama-3.2-1B@refs/pr/12");
  EXPECT_EQ(pinned.repo_id, "meta-llama/Llama-3.2-1B");
  EXPECT_EQ(pinned.revision, "refs/pr/12");
}

TEST(HubRef, RefusesWhatTheHubRefusesSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpt2", "expected ORG/NAME[@REVISION]"},
      {"a/b/c", "expected ORG/NAME[@REVISION]"},
      {"./models/x", "expected ORG/NAME[@REVISION]"},
      {"-org/model", "a part cannot start or end with '-' or '.'"},
      {"org/na me", "only letters, digits"},
      {"org/a--b", "\"--\" and \"..\" are not allowed"},
      {"org/model.git", "a repository id does not end with .git"},
      {"org/model@", "the revision after '@'"},
      {"org/", "each part has 1 to 96 characters"},
      {"org/model@../../../etc", "the revision after '@' has an empty, '.' or '..' part between slashes"},
      {"org/model@refs//pr", "the revision after '@' has an empty, '.' or '..' part between slashes"},
      {"org/model@/etc", "the revision after '@' has an empty, '.' or '..' part between slashes"},
  };
  for (const auto& [text, why] : cases) {
    try {
      parse_hub_ref(text);
      ADD_FAILURE() << text << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + text + "' is not a Hub model id: " + why),
                std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(try_parse_hub_ref(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace canrun
