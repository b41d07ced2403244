// canrun tokenize MODEL --text T | --file F | --decode IDS: a model's tokenizer.json
// applied by hand, to see exactly which tokens a text becomes and back.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/json.h"

namespace canrun {
namespace {

struct TokenizeArgs {
  std::string source;
  std::string text;
  std::string file;
  std::string decode;
  bool no_special = false;
  bool keep_special = false;
  bool json = false;
};

// A model folder holds its tokenizer in tokenizer.json; a file path is used as is.
std::string tokenizer_path(const std::string& source) {
  const std::filesystem::path path(source);
  if (!std::filesystem::is_directory(path)) return source;
  const std::filesystem::path inside = path / "tokenizer.json";
  if (!std::filesystem::is_regular_file(inside)) {
    fail(ErrorKind::kIo, source + ": folder has no tokenizer.json");
  }
  return inside.string();
}

std::vector<int32_t> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  if (list.find_first_not_of(" ") == std::string::npos) return ids;
  size_t begin = 0;
  for (size_t item = 1;; ++item) {
    const size_t comma = std::min(list.find(',', begin), list.size());
    std::string piece = list.substr(begin, comma - begin);
    piece.erase(0, piece.find_first_not_of(' '));
    piece.erase(piece.find_last_not_of(' ') + 1);
    int32_t id = 0;
    const auto [end, error] = std::from_chars(piece.data(), piece.data() + piece.size(), id);
    if (piece.empty() || error != std::errc() || end != piece.data() + piece.size()) {
      fail(ErrorKind::kUsage, "--decode: item " + std::to_string(item) + " '" + piece +
                                  "' is not a token id (expected comma-separated integers, e.g. 1,2,3)");
    }
    ids.push_back(id);
    if (comma == list.size()) return ids;
    begin = comma + 1;
  }
}

// A token as a JSON string: quotes, escaped control characters, UTF-8 kept.
std::string quoted(const std::string& text) { return Json(text).dump(); }

// Columns on a terminal: one per character, not per byte.
size_t columns(const std::string& text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void print_table(const Tokenizer& tokenizer, const Tokenizer::Encoding& encoding) {
  std::vector<std::string> pieces, texts;
  size_t piece_width = std::string("token").size();
  for (size_t i = 0; i < encoding.ids.size(); ++i) {
    pieces.push_back(quoted(encoding.tokens[i]));
    texts.push_back(quoted(tokenizer.decode(std::span(&encoding.ids[i], 1), false)));
    piece_width = std::max(piece_width, columns(pieces.back()));
  }
  std::cout << encoding.ids.size() << " tokens\n";
  const auto pad = [](std::string text, size_t width, bool right) {
    if (columns(text) >= width) return text;
    const std::string fill(width - columns(text), ' ');
    return right ? fill + text : text + fill;
  };
  std::cout << pad("#", 6, true) << "  " << pad("id", 8, true) << "  " << pad("token", piece_width, false)
            << "  text\n";
  for (size_t i = 0; i < encoding.ids.size(); ++i) {
    std::cout << pad(std::to_string(i), 6, true) << "  " << pad(std::to_string(encoding.ids[i]), 8, true)
              << "  " << pad(pieces[i], piece_width, false) << "  " << texts[i] << "\n";
  }
}

void run_tokenize(const TokenizeArgs& args, bool has_text, bool has_file, bool has_decode) {
  if (!has_text && !has_file && !has_decode) {
    fail(ErrorKind::kUsage, "tokenize: give one of --text, --file or --decode");
  }
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path(args.source));
  if (has_decode) {
    const std::vector<int32_t> ids = parse_ids(args.decode);
    for (const int32_t id : ids)
      if (!tokenizer.id_to_token(id))
        fail(ErrorKind::kUsage, "--decode: token id " + std::to_string(id) + " is not in the vocabulary (" +
                                    std::to_string(tokenizer.vocab_size()) + " tokens)");
    const std::string text = tokenizer.decode(ids, !args.keep_special);
    if (args.json) {
      std::cout << Json{{"text", text}}.dump() << "\n";
    } else {
      std::cout << text << "\n";
    }
    return;
  }
  const std::string text = has_file ? read_text_file(args.file) : args.text;
  const Tokenizer::Encoding encoding = tokenizer.encode(text, !args.no_special);
  if (args.json) {
    std::cout << Json{{"ids", encoding.ids}, {"tokens", encoding.tokens}}.dump() << "\n";
  } else {
    print_table(tokenizer, encoding);
  }
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* command = app.add_subcommand(
      "tokenize", "Encode text with a model's tokenizer.json, or decode token ids back to text");
  command->add_option("model", args->source,
                      "model folder holding tokenizer.json, a tokenizer.json file, or a Hub id ORG/NAME[@REVISION]")
      ->required()
      ->transform(hub_model_folder());
  CLI::Option* text = command->add_option("--text", args->text, "text to encode");
  CLI::Option* file = command->add_option("--file", args->file, "file whose contents to encode");
  CLI::Option* decode =
      command->add_option("--decode", args->decode, "comma-separated token ids to decode, e.g. 1,2,3");
  text->excludes(file)->excludes(decode);
  file->excludes(decode);
  command->add_flag("--no-special", args->no_special,
                    "encode without the special tokens the post-processor adds");
  command->add_flag("--keep-special", args->keep_special, "keep special tokens in decoded text");
  command->add_flag("--json", args->json, R"(print {"ids": [...], "tokens": [...]} or {"text": ...})");
  command->callback([args, text, file, decode] {
    run_tokenize(*args, text->count() > 0, file->count() > 0, decode->count() > 0);
  });
}

}  // namespace canrun
