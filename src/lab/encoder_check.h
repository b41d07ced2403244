// The check protocol of an encoder (a family whose forward pass gives hidden states): fixed texts
// encoded by the tested run (the compiled cpu backend) and by the ref backend, compared.
//   sentence-similarity, feature-extraction: the sentence-transformers pipeline of the folder
//     (SentenceEncoder) embeds kCheckSentences; PASS when every tested embedding's cosine
//     similarity with the reference's is at least kMinCosineF32 (kMinCosineBf16 for bf16
//     weights), the smallest written as the row's min_cosine.
//   text-ranking: the cross-encoder (CrossEncoder) scores kCheckQuery against kCheckDocuments;
//     PASS when the documents rank in the same order and every score is within kMaxScoreDifference.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lab/check.h"
#include "lab/dataset.h"
#include "lab/model_source.h"
#include "lab/status.h"
#include "util/json.h"

namespace canrun {

inline constexpr double kMinCosineF32 = 0.99999;
inline constexpr double kMinCosineBf16 = 0.999;
inline constexpr double kMaxScoreDifference = 1e-4;

const std::vector<std::string>& check_sentences();
inline constexpr const char* kCheckQuery = "How many people live in Berlin?";
const std::vector<std::string>& check_documents();

// The protocol the task of an encoder row follows: "embedding", "ranking", or "" (none yet:
// text-classification).
std::string encoder_protocol(const std::string& task);

// The row's `prompt` of an encoder check of `task`: which fixed texts it encodes.
std::string encoder_check_prompt(const std::string& task, bool synthetic);

// The task of an encoder checked without a catalog entry of an encoder task: text-ranking for a
// *ForSequenceClassification checkpoint, else sentence-similarity.
std::string encoder_task_of(const Json& config);

// The smallest cosine similarity of row i of `tested` with row i of `reference` (rows of
// `dimension` floats), and that row; Error(kRuntime) when the sizes differ or a row is zero.
struct CosineResult {
  double min_cosine = 1;
  int64_t row = 0;
};
CosineResult min_cosine(std::span<const float> tested, std::span<const float> reference, int64_t dimension);

// The verdict of an embedding check: PASS when min_cosine >= threshold, else FAIL_MISMATCH with
// the sentence named.
void record_embedding_verdict(const CosineResult& cosine, double threshold, ResultRow& row);

// The verdict of a ranking check on each document's first score, in the documents' order.
void record_ranking_verdict(std::span<const double> tested, std::span<const double> reference, ResultRow& row);

// For synthetic weights: the files besides config.json and model.safetensors that make the folder
// an encoder canrun and sentence-transformers load: a WordPiece tokenizer.json over the check
// texts' characters and words (BERT's normalizer, pre-tokenizer and [CLS] A [SEP] B [SEP]
// template), tokenizer_config.json, and for an embedding model modules.json, 1_Pooling/config.json
// and sentence_bert_config.json as the catalog's sentence_transformers record says (pooling mode,
// Normalize, max_seq_length); without that record a bare encoder (mean pooling, as
// sentence-transformers makes one). Error(kUsage) naming the field for a vocabulary too small or
// a module it cannot make (Dense: the record has no weights' shapes).
void write_synthetic_encoder_files(const std::string& dir, const Json& config, const Json& sentence_transformers,
                                   const std::string& task);

// Runs the tested and the reference encoding of `source` and records the verdict, timings and
// plan into `row`; `stage` tells the caller where an exception came from.
void run_encoder_check(const ModelSource& source, const CheckOptions& options, bool bf16_weights, ResultRow& row,
                       CheckStage& stage);

}  // namespace canrun
