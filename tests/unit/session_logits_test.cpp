// Session::logits_after_each: the logits after every token of a sequence in one forward pass,
// on ref and on compiled cpu, are the ones a prefill of each prefix ends with.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/session.h"
#include "util/error.h"

namespace canrun {
namespace {

const std::string kLlama = std::string(CANRUN_SOURCE_DIR) + "/tests/fixtures/models/llama_f32";

// The logits after every token in one pass are those a prefill of each prefix ends with.
TEST(SessionLogits, AfterEachTokenMatchEachPrefixsPrefill) {
  for (Backend backend : {Backend::kRef, Backend::kCpu}) {
    Session session(kLlama, backend == Backend::kRef ? uncompiled(Backend::kRef) : SessionOptions{});
    const std::vector<int32_t> ids = {1, 17, 42, 99, 7, 3};
    const std::vector<float> all = session.logits_after_each(ids);
    const size_t vocab = all.size() / ids.size();
    GenerateRequest request;
    request.max_new_tokens = 0;
    for (size_t length : {size_t{1}, size_t{4}, ids.size()}) {
      const std::vector<float> prefix =
          session.generate(std::span<const int32_t>(ids).first(length), request).prompt_logits;
      ASSERT_EQ(prefix.size(), vocab);
      for (size_t v = 0; v < vocab; ++v) ASSERT_NEAR(all[(length - 1) * vocab + v], prefix[v], 2e-4) << length;
    }
  }
  Session session(kLlama, uncompiled(Backend::kRef));
  EXPECT_THROW(session.logits_after_each({}), Error);
}

}  // namespace
}  // namespace canrun
