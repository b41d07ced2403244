// The compile step: turns a model program built for the cpu backend into plans for fixed
// shapes — its matrices repacked into the panels the kernels read (one file per shard, shared
// by every bucket), and per prompt-length bucket the buffer plans of prefill and of one decode
// step (derived from the program: what the executor allocates) with the kernel choices tuned
// for the bucket's shapes — stored in the plan cache, so the next run with the same compiler,
// ISA, model content, shapes and shard loads it instead. Prompts are rounded up to a bucket; a
// prompt in a bucket not compiled yet compiles it (counted as a recompilation once the first
// bucket is in place).
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/safetensors.h"
#include "parallel/shard.h"
#include "program/buffer_plan.h"
#include "program/program.h"
#include "util/json.h"
#include "util/mapped_file.h"
#include "util/progress_line.h"

namespace canrun {

// 16, 32, 64, ... 32768.
std::vector<int64_t> default_prompt_buckets();
// "32,128,512": ascending positive lengths; throws Error(kUsage) naming `option`.
std::vector<int64_t> parse_prompt_buckets(std::string_view text, std::string_view option);

// The instruction set the cpu kernels run with on this machine (kernels/cpu/instruction_set.h:
// e.g. "x86_64-avx512-bf16"), as plan keys name it.
std::string kernel_isa();

struct CompileOptions {
  std::vector<int64_t> buckets = default_prompt_buckets();
  std::filesystem::path cache_dir;  // empty: PlanCache::default_root()
  bool use_cache = true;            // false: compile every time, store nothing
  ProgressReport progress;          // a cold compile's steps (packing weights, tuning); none: silent
  // kBF16: f32 weight matrices are packed as bf16 and multiplied as a bf16 checkpoint's are
  // (vdpbf16ps where the processor has it); kF32: every matrix as stored.
  DType products = DType::kF32;
};

struct CompileStats {
  double seconds = 0;                 // everything spent compiling or loading plans
  int64_t compilations = 0;           // plan entries built (not found in the cache)
  int64_t cache_hits = 0;             // plan entries loaded from the cache
  int64_t pulled_hits = 0;            // of those, entries `canrun cache pull` brought from a remote cache
  int64_t recompilations = 0;         // buckets compiled after the first one
  int64_t plan_bytes = 0;             // on disk, every entry in use
  int64_t peak_activation_bytes = 0;  // the largest arena of the buckets in use
  int64_t tuned_products = 0;         // product shapes with a tuned choice, over the buckets in use
  int64_t onednn_products = 0;        // of those, the ones oneDNN's matmul runs
  std::vector<int64_t> buckets;       // compiled so far
};

class CompiledModel {
 public:
  // Packs `program`'s matrices (or maps the packed ones from the cache) and swaps them in.
  // `program` must be built for the cpu backend and outlive this object, which owns the packed
  // weights' mapping. `store`, when given, holds the checkpoint the matrices were read from: the
  // pages of each matrix are let go once it is packed, so compiling never holds the checkpoint
  // and its packed copy at once.
  CompiledModel(Program& program, int64_t max_positions, std::string model_dir, Shard shard, CompileOptions options,
                const WeightStore* store = nullptr);

  struct Shape {
    int64_t bucket = 0;          // the prompt-length bucket
    int64_t cache_capacity = 0;  // the static KV cache the plan was made for
  };
  struct Plans {
    Shape shape;
    ExecutionPlan prefill;  // up to `bucket` tokens
    ExecutionPlan decode;   // one token
  };
  // The plans a prompt of `prompt_length` tokens followed by `new_tokens` runs with, compiled
  // first when needed. Throws Error(kUsage) when the prompt is longer than the largest bucket.
  const Plans& prepare(int64_t prompt_length, int64_t new_tokens);

  const CompileStats& stats() const { return stats_; }
  Json stats_json() const;

 private:
  void load_weights(const WeightStore* store);
  void load_shape(Plans& plans);
  std::string label() const;
  // The shard layout in the plan key: "tp<workers>.rank<rank>".
  std::string shard_name() const;

  Program& program_;
  int64_t max_positions_;
  std::string model_dir_;
  Shard shard_;
  CompileOptions options_;
  std::string config_fingerprint_, weights_fingerprint_;
  std::unique_ptr<MappedFile> packed_;
  std::deque<Plans> compiled_;  // stable addresses: runs hold on to their plans
  CompileStats stats_;
};

}  // namespace canrun
