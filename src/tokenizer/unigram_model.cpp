// Unigram (SentencePiece's model) as the tokenizers library runs it: the segmentation of a
// word into vocabulary pieces with the highest total score (Viterbi over byte positions).
// A character that no single piece covers is unknown; it scores the lowest piece score
// minus 10, and neighbouring unknowns fuse into one token, which byte_fallback spells in
// <0xXX> pieces instead when the vocabulary has them all.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "tokenizer/models.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace canrun {
namespace {

constexpr double kUnknownPenalty = 10.0;

// The pieces as a byte trie, for the pieces that start a given position.
class PieceTrie {
 public:
  void insert(std::string_view piece, int32_t id) {
    uint32_t node = 0;
    for (const char byte : piece) node = child_or_add(node, static_cast<unsigned char>(byte));
    if (node != 0) nodes_[node].id = id;  // an empty piece never matches, as in the library
  }

  // Calls found(length, id) for every piece that is a prefix of `text`, shortest first.
  template <typename Found>
  void for_each_prefix(std::string_view text, Found&& found) const {
    uint32_t node = 0;
    for (size_t length = 1; length <= text.size(); ++length) {
      node = child(node, static_cast<unsigned char>(text[length - 1]));
      if (node == kNone) return;
      if (nodes_[node].id >= 0) found(length, nodes_[node].id);
    }
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  struct Node {
    uint32_t first_child = kNone;
    uint32_t next_sibling = kNone;
    unsigned char label = 0;
    int32_t id = -1;
  };

  uint32_t child(uint32_t node, unsigned char label) const {
    for (uint32_t c = nodes_[node].first_child; c != kNone; c = nodes_[c].next_sibling) {
      if (nodes_[c].label == label) return c;
    }
    return kNone;
  }

  uint32_t child_or_add(uint32_t node, unsigned char label) {
    if (const uint32_t existing = child(node, label); existing != kNone) return existing;
    const auto added = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back({kNone, nodes_[node].first_child, label, -1});
    nodes_[node].first_child = added;
    return added;
  }

  std::vector<Node> nodes_{Node{}};
};

class UnigramModel : public Model {
 public:
  UnigramModel(Vocab vocab, std::vector<double> scores, std::optional<int32_t> unk_id, bool byte_fallback,
               std::string missing_unk_message)
      : Model(std::move(vocab)),
        scores_(std::move(scores)),
        unk_id_(unk_id),
        byte_fallback_(byte_fallback),
        missing_unk_message_(std::move(missing_unk_message)) {
    double min_score = std::numeric_limits<double>::infinity();
    for (size_t id = 0; id < scores_.size(); ++id) {
      const std::string& piece = *vocab_.token(static_cast<int32_t>(id));
      // A repeated piece is found under its last id, with that id's score.
      trie_.insert(piece, *vocab_.find(piece));
      min_score = std::min(min_score, scores_[id]);
    }
    unknown_score_ = min_score - kUnknownPenalty;
  }

  std::vector<Token> tokenize(std::string_view word) const override {
    std::vector<Token> tokens;
    for (std::string& piece : best_segmentation(word)) {
      if (const auto id = vocab_.find(piece)) {
        tokens.push_back({*id, std::move(piece)});
        continue;
      }
      if (byte_fallback_) {
        if (auto bytes = byte_tokens(piece)) {
          tokens.insert(tokens.end(), bytes->begin(), bytes->end());
          continue;
        }
      }
      // An unknown run keeps its own text as the token, under the unknown id.
      tokens.push_back({unknown_id(), std::move(piece)});
    }
    return tokens;
  }

 private:
  struct BestPath {
    double score = 0;  // of the best path ending here
    size_t start = kUnreached;
    int32_t id = 0;  // of the last piece on that path
  };
  static constexpr size_t kUnreached = std::numeric_limits<size_t>::max();

  int32_t unknown_id() const {
    if (!unk_id_) fail(ErrorKind::kTokenizer, missing_unk_message_);
    return *unk_id_;
  }

  // Whether a path scoring `score` beats the best one to `end` so far; of equally good paths
  // the first one found stays.
  static bool improves(const BestPath& end, double score) { return end.start == kUnreached || score > end.score; }

  std::vector<std::string> best_segmentation(std::string_view word) const {
    std::vector<BestPath> best(word.size() + 1);
    for (size_t start = 0; start < word.size();) {
      const double score_here = best[start].score;
      const size_t char_length =
          std::min(unicode::char_length(static_cast<unsigned char>(word[start])), word.size() - start);
      bool covers_char = false;
      trie_.for_each_prefix(word.substr(start), [&](size_t length, int32_t id) {
        const double score = scores_[static_cast<size_t>(id)] + score_here;
        if (improves(best[start + length], score)) best[start + length] = {score, start, id};
        covers_char = covers_char || length == char_length;
      });
      // Like the library, a missing unknown id only fails where an unknown piece would be taken.
      const double unknown_score = unknown_score_ + score_here;
      if (!covers_char && improves(best[start + char_length], unknown_score)) {
        best[start + char_length] = {unknown_score, start, unknown_id()};
      }
      start += char_length;
    }

    // Back from the end; runs of unknown pieces become one piece.
    std::vector<std::string> pieces;
    std::string unknown_run;
    const auto end_unknown_run = [&] {
      if (!unknown_run.empty()) pieces.push_back(std::move(unknown_run));
      unknown_run.clear();
    };
    for (size_t end = word.size(); end > 0;) {
      const BestPath& node = best[end];
      const std::string_view piece = word.substr(node.start, end - node.start);
      if (unk_id_ && node.id == *unk_id_) {
        unknown_run.insert(0, piece);
      } else {
        end_unknown_run();
        pieces.emplace_back(piece);
      }
      end = node.start;
    }
    end_unknown_run();
    std::reverse(pieces.begin(), pieces.end());
    return pieces;
  }

  std::optional<std::vector<Token>> byte_tokens(std::string_view piece) const {
    std::vector<Token> tokens;
    for (const char byte : piece) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(byte));
      const auto id = vocab_.find(name);
      if (!id) return std::nullopt;
      tokens.push_back({*id, name});
    }
    return tokens;
  }

  std::vector<double> scores_;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_;
  std::string missing_unk_message_;
  PieceTrie trie_;
  double unknown_score_ = 0;
};

}  // namespace

std::unique_ptr<Model> parse_unigram_model(const JsonField& field) {
  std::vector<std::string> pieces;
  std::vector<double> scores;
  for (const JsonField& entry : field["vocab"].items()) {
    const std::vector<JsonField> parts = entry.items();
    if (parts.size() != 2) entry.fail("expected [piece, score]");
    pieces.push_back(parts[0].as_string());
    scores.push_back(parts[1].as_number());
  }
  if (pieces.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    field["vocab"].fail("has more pieces than token ids can number");
  }
  std::optional<int32_t> unk_id;
  if (const auto unk = field.find("unk_id")) {
    const int32_t id = unk->as_token_id();
    if (pieces.empty()) unk->fail("is set but model.vocab is empty");
    if (static_cast<size_t>(id) >= pieces.size()) {
      unk->fail(std::to_string(id) + " is past the end of model.vocab (" + std::to_string(pieces.size()) + " pieces)");
    }
    unk_id = id;
  }
  const std::string missing_unk_message =
      field.origin() + ": " + field.path() + ".unk_id: is null, and the text holds a character no piece covers";
  return std::make_unique<UnigramModel>(Vocab::from_pieces(std::move(pieces)), std::move(scores), unk_id,
                                        field.bool_or("byte_fallback", false), missing_unk_message);
}

}  // namespace canrun
