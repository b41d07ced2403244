// The committed tiny encoders of tools/make_encoder_fixtures.py (tests/fixtures/encoders/NAME,
// goldens in tests/goldens/encoders/NAME.json) and the engines their parity tests run on.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "util/json.h"

namespace canrun::encoder_fixtures {

inline const std::vector<std::string> kNames = {"bert_mean",          "roberta_cls_dense",    "xlm_roberta_modes",
                                                "distilbert_mean",    "mpnet_mean",           "qwen3_last_token",
                                                "mistral_last_token", "gemma3_bidirectional", "modernbert_mean",
                                                "nomic_bert_mean",    "gte_cls"};
inline const std::vector<std::string> kCrossEncoders = {"bert_cross_encoder", "xlm_roberta_cross_encoder",
                                                        "distilbert_cross_encoder", "mpnet_cross_encoder",
                                                        "modernbert_cross_encoder", "gte_cross_encoder"};

inline std::string folder(const std::string& name) {
  return (std::filesystem::path(CANRUN_SOURCE_DIR) / "tests/fixtures/encoders" / name).string();
}

inline Json golden(const std::string& name) {
  return read_json_file(
      (std::filesystem::path(CANRUN_SOURCE_DIR) / "tests/goldens/encoders" / (name + ".json")).string(),
      ErrorKind::kIo);
}

enum class Engine { kRef, kCpu, kCpuCompiled };

inline std::string engine_name(Engine engine) {
  return engine == Engine::kRef ? "ref" : engine == Engine::kCpu ? "cpu" : "cpu_compiled";
}

// The largest difference of a hidden state (or an embedding's value) allowed: ref (double sums)
// 1e-4, cpu (f32 sums in another order) 2e-4.
inline float tolerance(Engine engine) { return engine == Engine::kRef ? 1e-4f : 2e-4f; }

inline SessionOptions options_for(Engine engine) {
  SessionOptions options = uncompiled(engine == Engine::kRef ? Backend::kRef : Backend::kCpu);
  if (engine == Engine::kCpuCompiled) {
    options.compile = CompileOptions{};
    options.compile->use_cache = false;  // nothing written outside the test
    options.compile->buckets = {16, 64, 256};
  }
  return options;
}

}  // namespace canrun::encoder_fixtures
