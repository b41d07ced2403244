// tokenizer.json: loaded, then used on a fixed text that reaches every pipeline stage (spaces,
// digits, punctuation, accents, an emoji, a newline).
#include "fuzz_support.h"
#include "tokenizer/tokenizer.h"
#include "util/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const canrun::Tokenizer tokenizer = canrun::Tokenizer::from_json(
        canrun::parse_json(text, "tokenizer.json", canrun::ErrorKind::kTokenizer, canrun::kTokenizerJsonLimits),
        "tokenizer.json");
    const canrun::Tokenizer::Encoding encoding = tokenizer.encode("Hello  world, 1234 café 🎉!\n<s> end");
    (void)tokenizer.decode(encoding.ids, false);
    (void)tokenizer.decode(encoding.ids, true);
  });
  return 0;
}
