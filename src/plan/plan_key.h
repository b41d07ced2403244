// What a compiled plan depends on: the key a plan cache entry is stored under.
#pragma once

#include <string>

#include "util/json.h"

namespace canrun {

struct PlanKey {
  std::string kind;                 // "weights" (packed weights of one shard) or "graph" (one shape)
  std::string compiler_version;     // canrun's version (kVersion from util/version.h)
  std::string isa;                  // e.g. "x86_64-avx2-fma" or "portable"
  std::string backend;              // "cpu"
  std::string config_fingerprint;   // hex digest of the model's config
  std::string weights_fingerprint;  // hex digest of the weights
  // e.g. "prefill=64;cache=2048" ("" for kind "weights"), then ";products=bf16" (for weights
  // "products=bf16") where f32 matrices are packed as bf16.
  std::string shapes;
  std::string shard;                // e.g. "tp1.rank0"
  // What the model program looks like: the fingerprint of its steps and values (kind "graph") or
  // of its matrices' names and shapes (kind "weights"), so a changed engine never reads an old plan.
  std::string program = {};

  Json to_json() const;
  // Reads every field as a string; throws Error(kIo) naming `where` and the field at fault.
  static PlanKey from_json(const Json& json, const std::string& where);
  // 32 hex chars: xxh3-128 of the canonical JSON (sorted keys, no spaces) of every field.
  std::string digest() const;
  bool operator==(const PlanKey&) const = default;
};

// Whether `text` has the form of a digest (32 lowercase hex chars).
bool is_plan_digest(const std::string& text);

}  // namespace canrun
