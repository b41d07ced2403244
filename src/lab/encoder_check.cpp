#include "lab/encoder_check.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>

#include "checkpoint/config_reader.h"
#include "embed/cross_encoder.h"
#include "embed/sentence_model.h"
#include "lab/tested_run.h"
#include "models/registry.h"
#include "runtime/session.h"
#include "util/error.h"
#include "util/stopwatch.h"
#include "util/temporary_directory.h"

namespace canrun {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

void write_json(const fs::path& path, const Json& value) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path);
  out << value.dump(2) << "\n";
  if (!out) fail(ErrorKind::kIo, path.string() + ": cannot write");
}

// What BertPreTokenizer splits off as words: runs of letters and digits, each punctuation mark alone.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      word += static_cast<char>(std::tolower(c));
      continue;
    }
    if (!word.empty()) words.push_back(word);
    word.clear();
    if (!std::isspace(c)) words.emplace_back(1, static_cast<char>(c));
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

// A WordPiece tokenizer.json over the check texts: special tokens, each character alone and as a
// continuation ("##c"), and every word of the check texts whole.
Json synthetic_tokenizer(int64_t vocab_size, bool token_types) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  const std::string characters = "abcdefghijklmnopqrstuvwxyz0123456789.,?!'-:;()\"";
  for (char c : characters) vocab.emplace_back(1, c);
  for (char c : characters) vocab.push_back(std::string("##") + c);
  std::set<std::string> seen(vocab.begin(), vocab.end());
  std::vector<std::string> texts = check_sentences();
  texts.push_back(kCheckQuery);
  texts.insert(texts.end(), check_documents().begin(), check_documents().end());
  for (const std::string& text : texts)
    for (const std::string& word : words_of(text))
      if (seen.insert(word).second) vocab.push_back(word);
  if (static_cast<int64_t>(vocab.size()) > vocab_size)
    fail(ErrorKind::kUsage, "config.json: field 'vocab_size': " + std::to_string(vocab_size) +
                                " is smaller than the synthetic tokenizer's " + std::to_string(vocab.size()) + " tokens");
  Json vocab_json = Json::object();
  for (size_t i = 0; i < vocab.size(); ++i) vocab_json[vocab[i]] = i;
  Json added = Json::array();
  for (int i = 0; i < 5; ++i)
    added.push_back({{"id", i}, {"content", vocab[static_cast<size_t>(i)]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  const int second = token_types ? 1 : 0;
  const auto special = [](const char* id, int type) { return Json{{"SpecialToken", {{"id", id}, {"type_id", type}}}}; };
  const auto sequence = [](const char* id, int type) { return Json{{"Sequence", {{"id", id}, {"type_id", type}}}}; };
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", added},
          {"normalizer",
           {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
            {"strip_accents", nullptr}, {"lowercase", true}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", {special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)}},
            {"pair", {special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0), sequence("B", second),
                      special("[SEP]", second)}},
            {"special_tokens",
             {{"[CLS]", {{"id", "[CLS]"}, {"ids", {2}}, {"tokens", {"[CLS]"}}}},
              {"[SEP]", {{"id", "[SEP]"}, {"ids", {3}}, {"tokens", {"[SEP]"}}}}}}}},
          {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
          {"model",
           {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 100}, {"vocab", vocab_json}}}};
}

std::string string_or(const Json& json, const char* key, const std::string& fallback) {
  return json.is_object() && json.contains(key) && json[key].is_string() ? json[key].get<std::string>() : fallback;
}

// 1_Pooling/config.json in sentence-transformers' classic layout, for `mode`.
Json pooling_config(const std::string& mode, int64_t dimension, const Json& pooling) {
  static const std::vector<std::string> kModes = {"mean", "cls", "max", "lasttoken"};
  if (std::find(kModes.begin(), kModes.end(), mode) == kModes.end())
    fail(ErrorKind::kUsage, "catalog: field 'sentence_transformers.pooling.mode': '" + mode +
                                "' is not one of mean, cls, max, lasttoken");
  Json config = {{"word_embedding_dimension", dimension},
                 {"pooling_mode_cls_token", mode == "cls"},
                 {"pooling_mode_mean_tokens", mode == "mean"},
                 {"pooling_mode_max_tokens", mode == "max"},
                 {"pooling_mode_mean_sqrt_len_tokens", false},
                 {"pooling_mode_weightedmean_tokens", false},
                 {"pooling_mode_lasttoken", mode == "lasttoken"}};
  if (pooling.is_object() && pooling.contains("include_prompt") && pooling["include_prompt"].is_boolean())
    config["include_prompt"] = pooling["include_prompt"];
  return config;
}

void write_sentence_files(const fs::path& dir, const DecoderSpec& spec, const Json& st) {
  const Json pooling = st.is_object() && st.contains("pooling") ? st["pooling"] : Json();
  std::vector<std::string> modules;
  if (st.is_object() && st.contains("modules") && st["modules"].is_array())
    for (const Json& name : st["modules"]) modules.push_back(name.is_string() ? name.get<std::string>() : "");
  if (modules.empty() && pooling.is_object()) {
    modules = {"Transformer", "Pooling"};
    if (st.contains("normalize") && st["normalize"].is_boolean() && st["normalize"].get<bool>())
      modules.push_back("Normalize");
  }
  if (modules.empty()) return;  // a bare encoder: sentence-transformers and canrun pool by the mean
  Json listing = Json::array();
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string& name = modules[i];
    if (name != "Transformer" && name != "Pooling" && name != "Normalize")
      fail(ErrorKind::kUsage, "catalog: field 'sentence_transformers.modules': synthetic weights cannot make a '" +
                                  name + "' module (the record has no shapes for its weights)");
    const std::string path = name == "Transformer" ? "" : std::to_string(i) + "_" + name;
    listing.push_back({{"idx", i}, {"name", std::to_string(i)}, {"path", path},
                       {"type", "sentence_transformers.models." + name}});
    if (name == "Pooling")
      write_json(dir / path / "config.json", pooling_config(string_or(pooling, "mode", "mean"), spec.hidden_size, pooling));
    if (name == "Normalize") fs::create_directories(dir / path);
  }
  write_json(dir / "modules.json", listing);
  int64_t max_seq_length = std::min<int64_t>(512, spec.max_positions);
  if (st.contains("max_seq_length") && st["max_seq_length"].is_number_integer())
    max_seq_length = std::min<int64_t>(st["max_seq_length"].get<int64_t>(), spec.max_positions);
  const bool lower = st.contains("do_lower_case") && st["do_lower_case"].is_boolean() && st["do_lower_case"].get<bool>();
  write_json(dir / "sentence_bert_config.json", {{"max_seq_length", max_seq_length}, {"do_lower_case", lower}});
}

std::vector<double> first_scores(const std::vector<RankedDocument>& scored) {
  std::vector<double> scores;
  for (const RankedDocument& document : scored) scores.push_back(document.scores.at(0));
  return scores;
}

std::string numbers_text(std::span<const double> values) {
  std::string text;
  for (double v : values) text += (text.empty() ? "" : ", ") + format_number("%.6g", v);
  return text;
}

// Document indices ordered by score, highest first, ties in the documents' order.
std::vector<int64_t> ranking_of(std::span<const double> scores) {
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace

const std::vector<std::string>& check_sentences() {
  static const std::vector<std::string> sentences = {
      "The capital of France is Paris.",
      "Paris is the largest city in France.",
      "A cat is sleeping on the warm windowsill.",
      "The kitten naps in the sun by the window.",
      "Stock markets fell sharply on Monday morning.",
      "How do I reset my password?",
      "Photosynthesis turns light, water and carbon dioxide into sugar.",
      "She plays the violin in the city orchestra.",
  };
  return sentences;
}

const std::vector<std::string>& check_documents() {
  static const std::vector<std::string> documents = {
      "Berlin has a population of about 3.7 million people.",
      "The Brandenburg Gate is a monument in Berlin.",
      "Paris is the capital of France.",
      "Bananas are rich in potassium.",
  };
  return documents;
}

std::string encoder_protocol(const std::string& task) {
  if (task == "sentence-similarity" || task == "feature-extraction") return "embedding";
  if (task == "text-ranking") return "ranking";
  return "";
}

std::string encoder_task_of(const Json& config) {
  return is_sequence_classifier(config) ? "text-ranking" : "sentence-similarity";
}

std::string encoder_check_prompt(const std::string& task, bool synthetic) {
  std::string prompt = encoder_protocol(task) == "ranking"
                           ? "the query \"" + std::string(kCheckQuery) + "\" against " +
                                 std::to_string(check_documents().size()) + " fixed documents (src/lab/encoder_check.cpp)"
                           : std::to_string(check_sentences().size()) +
                                 " fixed sentences (src/lab/encoder_check.cpp), from \"" + check_sentences().front() + "\"";
  if (synthetic) prompt += "; synthetic weights: a tokenizer over the check texts' words";
  return prompt;
}

CosineResult min_cosine(std::span<const float> tested, std::span<const float> reference, int64_t dimension) {
  if (dimension <= 0 || tested.size() != reference.size() || tested.size() % static_cast<size_t>(dimension) != 0)
    fail(ErrorKind::kRuntime, "embeddings: the tested run gave " + std::to_string(tested.size()) +
                                  " values and the reference " + std::to_string(reference.size()) +
                                  " (dimension " + std::to_string(dimension) + ")");
  CosineResult result;
  const int64_t rows = static_cast<int64_t>(tested.size()) / dimension;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, a2 = 0, b2 = 0;
    for (int64_t i = 0; i < dimension; ++i) {
      const double a = tested[static_cast<size_t>(r * dimension + i)], b = reference[static_cast<size_t>(r * dimension + i)];
      dot += a * b;
      a2 += a * a;
      b2 += b * b;
    }
    if (a2 == 0 || b2 == 0 || !std::isfinite(dot) || !std::isfinite(a2) || !std::isfinite(b2))
      fail(ErrorKind::kRuntime, "embeddings: sentence " + std::to_string(r) + " has a zero or non-finite embedding (" +
                                    (a2 == 0 || !std::isfinite(a2) ? "tested run" : "reference") + ")");
    const double cosine = dot / std::sqrt(a2 * b2);
    if (r == 0 || cosine < result.min_cosine) result = {cosine, r};
  }
  return result;
}

void record_embedding_verdict(const CosineResult& cosine, double threshold, ResultRow& row) {
  row.min_cosine = cosine.min_cosine;
  row.verification = "cosine";
  if (cosine.min_cosine >= threshold) {
    row.result = status_name(Status::kPass);
    return;
  }
  row.result = status_name(Status::kFailMismatch);
  row.error_type = "mismatch";
  row.error_message = "embedding of sentence " + std::to_string(cosine.row) + " (\"" +
                      check_sentences().at(static_cast<size_t>(cosine.row)) + "\"): cosine similarity " +
                      format_number("%.7f", cosine.min_cosine) + " with the reference, below " +
                      format_number("%g", threshold);
}

void record_ranking_verdict(std::span<const double> tested, std::span<const double> reference, ResultRow& row) {
  if (tested.size() != reference.size() || tested.empty())
    fail(ErrorKind::kRuntime, "scores: the tested run gave " + std::to_string(tested.size()) + " and the reference " +
                                  std::to_string(reference.size()));
  double largest = 0;
  for (size_t i = 0; i < tested.size(); ++i) {
    const double difference = std::abs(tested[i] - reference[i]);
    largest = std::isfinite(difference) ? std::max(largest, difference) : INFINITY;
  }
  row.max_score_difference = largest;
  row.verification = "scores";
  const bool same_order = ranking_of(tested) == ranking_of(reference);
  if (same_order && largest <= kMaxScoreDifference) {
    row.result = status_name(Status::kPass);
    return;
  }
  row.result = status_name(Status::kFailMismatch);
  row.error_type = "mismatch";
  row.error_message = std::string(same_order ? "" : "the documents rank in another order; ") + "scores [" +
                      numbers_text(tested) + "] against the reference's [" + numbers_text(reference) +
                      "], largest difference " + format_number("%.3g", largest) + " (tolerance " +
                      format_number("%g", kMaxScoreDifference) + ")";
}

void write_synthetic_encoder_files(const std::string& dir, const Json& config, const Json& sentence_transformers,
                                   const std::string& task) {
  const fs::path folder(dir);
  const ConfigReader reader(config, dir + "/config.json");
  const DecoderSpec spec = architecture_of(reader).read_spec(reader);
  // An embedding model's folder gets modules.json below, which makes any family an encoder; a
  // ranker's head is read from an encoder only.
  const bool embedding = encoder_protocol(task) == "embedding";
  if (!embedding) require_encoder(spec, dir);
  // BERT hands a pair's second text token type 1; RoBERTa's family has one token type.
  const bool token_types = spec.base_model_prefix == "bert." && spec.type_vocab_size > 1;
  write_json(folder / "tokenizer.json", synthetic_tokenizer(spec.vocab_size, token_types));
  Json tokenizer_config = {{"tokenizer_class", "PreTrainedTokenizerFast"}, {"cls_token", "[CLS]"},
                           {"sep_token", "[SEP]"},  {"pad_token", "[PAD]"},
                           {"unk_token", "[UNK]"},  {"mask_token", "[MASK]"},
                           {"model_max_length", std::min<int64_t>(512, spec.max_positions)}};
  if (!token_types) tokenizer_config["model_input_names"] = {"input_ids", "attention_mask"};
  write_json(folder / "tokenizer_config.json", tokenizer_config);
  if (embedding) write_sentence_files(folder, spec, sentence_transformers);
}

void run_encoder_check(const ModelSource& source, const CheckOptions& options, bool bf16_weights, ResultRow& row,
                       CheckStage& stage) {
  const std::string protocol = encoder_protocol(row.task);
  const std::vector<std::string>& sentences = check_sentences();
  const std::vector<std::string>& documents = check_documents();
  const bool ranking = protocol == "ranking";
  row.prompt = encoder_check_prompt(row.task, source.synthetic());
  const int64_t texts = static_cast<int64_t>(ranking ? documents.size() : sentences.size());

  std::optional<TemporaryDirectory> own_cache;
  if (!options.plan_cache) own_cache.emplace("canrun-check-plans-");
  const std::string cache_dir = own_cache ? own_cache->path().string() : options.cache_dir;
  std::vector<float> tested_embeddings;
  int64_t dimension = 0;
  std::vector<double> tested_scores;
  // What it measured is kept in the row also when a later step fails.
  TestedRun measured;
  try {
    stage = CheckStage::kLoad;
    Session session(source.dir, tested_session_options(cache_dir, options, single_process_communicator(),
                                                       measured, stage));
    if (measured.load_time_s == std::nullopt) measured.load_time_s = session.load_seconds();
    // The first pass compiles its bucket; the second is timed.
    stage = CheckStage::kCompile;
    report_check_step(options, "tested run (cpu): encoding " + std::to_string(texts) + " texts");
    if (ranking) {
      CrossEncoder encoder(session);
      encoder.score(kCheckQuery, documents);
      stage = CheckStage::kGenerate;
      const auto start = Clock::now();
      tested_scores = first_scores(encoder.score(kCheckQuery, documents));
      row.sentences_per_s = static_cast<double>(texts) / std::max(seconds_since(start), 1e-9);
    } else {
      SentenceEncoder encoder(session);
      encoder.embed(sentences, EmbedOptions{});
      stage = CheckStage::kGenerate;
      const auto start = Clock::now();
      const Embeddings result = encoder.embed(sentences, EmbedOptions{});
      row.sentences_per_s = static_cast<double>(texts) / std::max(seconds_since(start), 1e-9);
      tested_embeddings = result.vectors;
      dimension = result.dimension;
    }
    record_compile_stats(session, options, measured);
  } catch (...) {
    record_tested_run(measured, row);
    throw;
  }
  record_tested_run(measured, row);
  stage = CheckStage::kLoad;
  report_check_step(options, "reference run (ref): loading");
  Session reference(source.dir, uncompiled(Backend::kRef));
  stage = CheckStage::kGenerate;
  report_check_step(options, "reference run (ref): encoding " + std::to_string(texts) + " texts");
  if (ranking) {
    CrossEncoder encoder(reference);
    const std::vector<double> scores = first_scores(encoder.score(kCheckQuery, documents));
    record_ranking_verdict(tested_scores, scores, row);
    return;
  }
  SentenceEncoder encoder(reference);
  const Embeddings result = encoder.embed(sentences, EmbedOptions{});
  if (result.dimension != dimension)
    fail(ErrorKind::kRuntime, "embeddings: dimension " + std::to_string(dimension) + " on the tested run, " +
                                  std::to_string(result.dimension) + " on the reference");
  record_embedding_verdict(min_cosine(tested_embeddings, result.vectors, dimension),
                           bf16_weights ? kMinCosineBf16 : kMinCosineF32, row);
}

}  // namespace canrun
