// Byte-pair encoding as the tokenizers library runs it: split a word into
// characters (or byte tokens / unk), then apply the lowest-ranked merge first,
// leftmost on ties, until none applies.
#include <cstdio>
#include <queue>

#include "tokenizer/models.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

struct MergeRule {
  uint32_t rank;
  int32_t merged_id;
};

struct Symbol {
  int32_t id;
  int prev;
  int next;
  bool removed;
};

struct Candidate {
  uint32_t rank;
  int pos;
  int32_t merged_id;
  // std::priority_queue pops the largest; the best candidate is the lowest rank, then position.
  bool operator<(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

struct BpeOptions {
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

class BpeModel : public Model {
 public:
  BpeModel(Vocab vocab, std::unordered_map<uint64_t, MergeRule> merges, BpeOptions options)
      : Model(std::move(vocab)), merges_(std::move(merges)), options_(std::move(options)) {}

  std::vector<Token> tokenize(std::string_view word) const override {
    if (word.empty()) return {};
    if (options_.ignore_merges) {
      if (const auto id = vocab_.find(word)) return {{*id, std::string(word)}};
    }
    std::vector<Symbol> symbols = initial_symbols(word);
    merge_all(symbols);
    std::vector<Token> tokens;
    for (const Symbol& symbol : symbols) {
      if (!symbol.removed) tokens.push_back({symbol.id, *vocab_.token(symbol.id)});
    }
    return tokens;
  }

 private:
  static void push(std::vector<Symbol>& symbols, int32_t id) {
    const int index = static_cast<int>(symbols.size());
    if (!symbols.empty()) symbols.back().next = index;
    symbols.push_back({id, index - 1, -1, false});
  }

  int32_t unk_id() const {
    const auto id = vocab_.find(*options_.unk_token);
    if (!id) {
      fail(ErrorKind::kTokenizer, "model.unk_token '" + *options_.unk_token + "' is not in model.vocab");
    }
    return *id;
  }

  // One symbol per character; characters outside the vocabulary become byte
  // tokens (<0xAB>) when byte_fallback is on, else unk (runs fused if fuse_unk).
  std::vector<Symbol> initial_symbols(std::string_view word) const {
    std::vector<Symbol> symbols;
    bool unk_pending = false;
    int32_t pending_unk_id = 0;
    for (size_t pos = 0; pos < word.size();) {
      const size_t begin = pos;
      unicode::next_char(word, pos);
      std::string piece(word.substr(begin, pos - begin));
      if (begin > 0) piece = options_.continuing_subword_prefix + piece;
      if (pos == word.size()) piece += options_.end_of_word_suffix;

      if (const auto id = vocab_.find(piece)) {
        if (unk_pending) push(symbols, pending_unk_id);
        unk_pending = false;
        push(symbols, *id);
        continue;
      }
      if (options_.byte_fallback) {
        if (const auto byte_ids = byte_token_ids(piece)) {
          for (const int32_t id : *byte_ids) push(symbols, id);
          continue;
        }
      }
      if (options_.unk_token) {
        if (unk_pending && !options_.fuse_unk) push(symbols, pending_unk_id);
        pending_unk_id = unk_id();
        unk_pending = true;
      }
    }
    if (unk_pending) push(symbols, pending_unk_id);
    return symbols;
  }

  std::optional<std::vector<int32_t>> byte_token_ids(std::string_view piece) const {
    std::vector<int32_t> ids;
    for (const char byte : piece) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(byte));
      const auto id = vocab_.find(name);
      if (!id) return std::nullopt;
      ids.push_back(*id);
    }
    return ids;
  }

  const MergeRule* rule_for(int32_t left, int32_t right) const {
    const auto it = merges_.find(pair_key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
  }

  void merge_all(std::vector<Symbol>& symbols) const {
    std::priority_queue<Candidate> queue;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      if (const MergeRule* rule = rule_for(symbols[i].id, symbols[i + 1].id)) {
        queue.push({rule->rank, static_cast<int>(i), rule->merged_id});
      }
    }
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      Symbol& left = symbols[top.pos];
      if (left.removed || left.next == -1) continue;
      const Symbol right = symbols[left.next];
      // Skip entries made stale by an earlier merge around this position.
      const MergeRule* rule = rule_for(left.id, right.id);
      if (rule == nullptr || rule->merged_id != top.merged_id) continue;

      symbols[left.next].removed = true;
      left.id = top.merged_id;
      left.next = right.next;
      if (right.next != -1) symbols[right.next].prev = top.pos;
      if (left.prev != -1) {
        if (const MergeRule* before = rule_for(symbols[left.prev].id, left.id)) {
          queue.push({before->rank, left.prev, before->merged_id});
        }
      }
      if (left.next != -1) {
        if (const MergeRule* after = rule_for(left.id, symbols[left.next].id)) {
          queue.push({after->rank, top.pos, after->merged_id});
        }
      }
    }
  }

  std::unordered_map<uint64_t, MergeRule> merges_;
  BpeOptions options_;
};

// A merge is "a b" (one space) or ["a", "b"].
std::pair<std::string, std::string> parse_merge(const JsonField& field) {
  if (field.json().is_string()) {
    const std::string text = field.as_string();
    const size_t space = text.find(' ');
    if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
      field.fail("merge '" + text + "' must be two tokens separated by one space");
    }
    return {text.substr(0, space), text.substr(space + 1)};
  }
  if (!field.json().is_array() || field.json().size() != 2) {
    field.fail("expected \"a b\" or [\"a\", \"b\"], got " + field.json().dump());
  }
  const std::vector<JsonField> parts = field.items();
  return {parts[0].as_string(), parts[1].as_string()};
}

std::unordered_map<uint64_t, MergeRule> parse_merges(const JsonField& field, const Vocab& vocab,
                                                     const std::string& prefix) {
  std::unordered_map<uint64_t, MergeRule> merges;
  const std::vector<JsonField> items = field.items();
  merges.reserve(items.size());
  for (size_t rank = 0; rank < items.size(); ++rank) {
    const auto [left, right] = parse_merge(items[rank]);
    const auto id_of = [&](const std::string& token, std::string_view role) {
      const auto id = vocab.find(token);
      if (!id) items[rank].fail(std::string(role) + " '" + token + "' is not in model.vocab");
      return *id;
    };
    const int32_t left_id = id_of(left, "token");
    const int32_t right_id = id_of(right, "token");
    // The right part carries the continuing-subword prefix, which merging drops.
    const std::string merged = left + right.substr(std::min(prefix.size(), right.size()));
    // A later duplicate replaces an earlier one, as in the library.
    merges[pair_key(left_id, right_id)] = {static_cast<uint32_t>(rank), id_of(merged, "merged token")};
  }
  return merges;
}

}  // namespace

std::unique_ptr<Model> parse_bpe_model(const JsonField& field) {
  if (const auto dropout = field.find("dropout"); dropout && dropout->as_number() != 0.0) {
    dropout->fail("dropout makes tokenization random; only null or 0 is supported");
  }
  BpeOptions options;
  options.unk_token = field.optional_string("unk_token");
  options.continuing_subword_prefix = field.string_or("continuing_subword_prefix", "");
  options.end_of_word_suffix = field.string_or("end_of_word_suffix", "");
  options.fuse_unk = field.bool_or("fuse_unk", false);
  options.byte_fallback = field.bool_or("byte_fallback", false);
  options.ignore_merges = field.bool_or("ignore_merges", false);
  Vocab vocab = Vocab::parse(field["vocab"]);
  auto merges = parse_merges(field["merges"], vocab, options.continuing_subword_prefix);
  return std::make_unique<BpeModel>(std::move(vocab), std::move(merges), std::move(options));
}

}  // namespace canrun
