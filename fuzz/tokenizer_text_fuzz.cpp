// Fuzzed text through real tokenizers of every model kind (byte-level BPE, Metaspace BPE,
// WordPiece, Unigram): the first byte picks one, the rest is encoded, decoded and streamed; the
// same bytes read as token ids are decoded too.
#include <algorithm>
#include <vector>

#include "fuzz_support.h"
#include "tokenizer/text_stream.h"
#include "tokenizer/tokenizer.h"

namespace {

const std::vector<canrun::Tokenizer>& tokenizers() {
  static const std::vector<canrun::Tokenizer> all = [] {
    std::vector<canrun::fuzz::fs::path> folders;  // sorted, so the first byte picks the same one everywhere
    for (const auto& entry : canrun::fuzz::fs::directory_iterator(canrun::fuzz::fs::path(CANRUN_SOURCE_DIR) /
                                                                  "tests/fixtures/tokenizers"))
      folders.push_back(entry.path());
    std::sort(folders.begin(), folders.end());
    std::vector<canrun::Tokenizer> loaded;
    for (const auto& folder : folders) loaded.push_back(canrun::Tokenizer::from_file((folder / "tokenizer.json").string()));
    return loaded;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const canrun::Tokenizer& tokenizer = tokenizers()[data[0] % tokenizers().size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  canrun::fuzz::refuse_only_with_canrun_errors([&] {
    const canrun::Tokenizer::Encoding encoding = tokenizer.encode(text, data[0] & 0x80);
    (void)tokenizer.decode(encoding.ids, false);
    canrun::TextStream stream(tokenizer);
    for (int32_t id : encoding.ids) (void)stream.push(id);
    (void)stream.finish();
    std::vector<int32_t> ids;
    for (size_t i = 1; i + 1 < size; i += 2) ids.push_back((data[i] | data[i + 1] << 8) % tokenizer.vocab_size());
    (void)tokenizer.decode(ids, true);
  });
  return 0;
}
