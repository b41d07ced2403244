// deepseek_v32's sparse attention indexer (DSA): a small attention of its own whose scores pick,
// per query, the positions the main attention then reads. Its per-sequence state holds its
// keys and the current run's choice, which AttentionStep reads as AttentionArgs::keep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/program.h"
#include "program/program_builder.h"
#include "program/sequence_state.h"

namespace canrun {

class IndexerState : public BlockState {
 public:
  IndexerState(int64_t key_dim, int64_t capacity)
      : key_dim_(key_dim), capacity_(capacity), keys_(static_cast<size_t>(key_dim * capacity)) {}
  float* key(int64_t position) { return keys_.data() + position * key_dim_; }
  // Row t of the current run's choice: keep[p] != 0 for each position p token t attends to.
  uint8_t* keep_row(int64_t t) { return keep_.data() + t * capacity_; }
  void start_run(int64_t tokens) { keep_.assign(static_cast<size_t>(tokens * capacity_), 0); }
  const uint8_t* keep() const { return keep_.data(); }
  int64_t capacity() const { return capacity_; }
  int64_t bytes() const override { return static_cast<int64_t>(keys_.size() * sizeof(float)); }
  bool rows_by_position() const override { return true; }

 private:
  int64_t key_dim_, capacity_;
  std::vector<float> keys_;
  std::vector<uint8_t> keep_;
};

// Declares a layer's indexer state (f32 keys of key_dim per position); returns its slot.
int declare_indexer(ProgramBuilder& program, const std::string& name, int64_t key_dim);

// inputs {q [tokens, heads * dim], k [tokens, dim], head weights [tokens, heads], rope table},
// outputs {}: rotates the first rope_dim dims of each query and key in halves (or in pairs), caches the keys,
// and keeps for each token the top_k positions by sum_h w_h heads^-0.5 relu(q_h . k_p dim^-0.5)
// among those it sees (all of them while there are at most top_k).
class IndexerStep : public Step {
 public:
  IndexerStep(Info info, int slot, int64_t heads, int64_t dim, int64_t rope_dim, bool rope_pairs, int64_t top_k)
      : Step(std::move(info)),
        slot_(slot),
        heads_(heads),
        dim_(dim),
        rope_dim_(rope_dim),
        rope_pairs_(rope_pairs),
        top_k_(top_k) {}
  std::string_view kind() const override { return "indexer"; }
  void run(StepContext& context) const override;
  StepCost cost(const Program& program, const RunShape& shape) const override;

 private:
  int slot_;
  int64_t heads_, dim_, rope_dim_;
  bool rope_pairs_;
  int64_t top_k_;
};

}  // namespace canrun
