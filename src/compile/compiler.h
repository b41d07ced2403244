// The compile step: turns a model loaded for the cpu backend into a plan for fixed shapes —
// its linear weights repacked into the panels the kernels read (one file per shard), and per
// prompt-length bucket the static graphs of prefill and of one decode step, their buffer plans
// (peak activation memory) and the kernel choices tuned for the bucket's shapes — stored in the
// plan cache, so the next run with the same compiler, ISA, model, shapes and shard loads it
// instead. Prompts are rounded up to a bucket; a prompt in a bucket not compiled yet compiles
// it (counted as a recompilation once the first bucket is in place).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/decoder_model.h"
#include "runtime/loaded_model.h"
#include "util/json.h"
#include "util/mapped_file.h"

namespace canrun {

// 16, 32, 64, ... 32768.
std::vector<int64_t> default_prompt_buckets();
// "32,128,512": ascending positive lengths; throws Error(kUsage) naming `option`.
std::vector<int64_t> parse_prompt_buckets(std::string_view text, std::string_view option);

// The instruction set the cpu kernels run with on this machine ("x86_64-avx2-fma" or
// "x86_64-portable"), as plan keys name it.
std::string kernel_isa();

struct CompileOptions {
  std::vector<int64_t> buckets = default_prompt_buckets();
  std::filesystem::path cache_dir;  // empty: PlanCache::default_root()
  bool use_cache = true;            // false: compile every time, store nothing
};

struct CompileStats {
  double seconds = 0;                 // everything spent compiling or loading plans
  int64_t compilations = 0;           // plan entries built (not found in the cache)
  int64_t cache_hits = 0;             // plan entries loaded from the cache
  int64_t recompilations = 0;         // buckets compiled after the first one
  int64_t plan_bytes = 0;             // on disk, every entry in use
  int64_t peak_activation_bytes = 0;  // the largest arena of the buckets in use
  std::vector<int64_t> buckets;       // compiled so far
};

class CompiledModel {
 public:
  // Packs `model`'s matrices (or maps the packed ones from the cache); `model` must be loaded
  // for the cpu backend and outlive this object, which owns the packed weights' mapping.
  CompiledModel(DecoderModel& model, std::string model_dir, CompileOptions options);

  struct Shape {
    int64_t bucket = 0;          // the prompt-length bucket
    int64_t cache_capacity = 0;  // the static KV cache the plan was made for
  };
  // The shape a prompt of `prompt_length` tokens followed by `new_tokens` runs in, compiled
  // first when needed. Throws Error(kUsage) when the prompt is longer than the largest bucket.
  Shape prepare(int64_t prompt_length, int64_t new_tokens);

  const CompileStats& stats() const { return stats_; }
  Json stats_json() const;

 private:
  void load_weights();
  void load_shape(const Shape& shape);
  std::string label() const;
  // The shard layout in the plan key: "tp<workers>.rank<rank>".
  std::string shard_name() const;

  DecoderModel& model_;
  std::string model_dir_;
  CompileOptions options_;
  std::string config_fingerprint_, weights_fingerprint_;
  std::unique_ptr<MappedFile> packed_;
  std::vector<Shape> compiled_;
  CompileStats stats_;
};

// Compiles `loaded` (best loaded without populating its weights) and lets the kernel drop the
// checkpoint pages the packing read: the packed copies replace them.
std::unique_ptr<CompiledModel> compile_loaded(LoadedModel& loaded, const CompileOptions& options);

}  // namespace canrun
