// Block kinds: the parts a decoder layer is made of (a token mixer such as attention, a
// feed-forward block such as a dense MLP or routed experts). Each kind lives in its own file and
// registers itself by name; an instance declares its tensors (visit), appends its steps to the
// program (emit) and keeps its own per-sequence state. A new kind plugs in without touching the
// others or the executor.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/decoder_spec.h"
#include "parallel/shard_layout.h"
#include "program/program_builder.h"
#include "program/tensor_visitor.h"

namespace canrun {

// Where an instance sits: its layer, this rank's share of the model, and its names' prefixes.
struct BlockPlace {
  const DecoderSpec& spec;  // lives as long as the program
  int64_t layer = 0;
  Shard shard;
  ShardLayout layout;
  std::string tensors;  // of the checkpoint's tensor names, e.g. "model.layers.3."
  std::string steps;    // of the program's step and value names, e.g. "layers.3."
};

// The prefix of layer `layer`'s step, value and state names: "layers.3.".
inline std::string layer_steps(int64_t layer) { return "layers." + std::to_string(layer) + "."; }

struct BlockIo {
  ValueId in = -1;    // [tokens, hidden]: the normalised residual stream
  ValueId out = -1;   // [tokens, hidden]: the block's output (this rank's partial sum when sharded)
  ValueId rope = -1;  // the layer's rotary table (cos | sin per token), -1 when it does not rotate
  ValueId residual = -1;  // the residual stream itself, not normalised (gemma4's router reads it)
};

class Block : public ProgramPart {
 public:
  // Declares (and, loading, receives) its tensors, in the checkpoint's visiting order.
  virtual void visit(TensorVisitor& tensors) = 0;
  virtual void emit(ProgramBuilder& program, const BlockIo& io) = 0;
};

using BlockFactory = std::function<std::unique_ptr<Block>(const BlockPlace& place)>;

void register_block_kind(const std::string& kind, BlockFactory factory);
// Throws Error(kUnsupportedArchitecture) naming the kind and the known ones.
std::unique_ptr<Block> make_block(const std::string& kind, const BlockPlace& place);
std::vector<std::string> block_kinds();

struct BlockKindRegistration {
  BlockKindRegistration(const std::string& kind, BlockFactory factory) { register_block_kind(kind, std::move(factory)); }
};

}  // namespace canrun
