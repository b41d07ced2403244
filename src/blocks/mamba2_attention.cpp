// falcon_h1's token mixer: Mamba-2 and attention side by side on the same normed input, their
// outputs summed before the residual add: mamba2(x) + attention(x * attention_in_scale) *
// attention_out_scale (Mamba-2 applies its own multipliers). Sharded, each rank's sum of the two
// partial sums is reduced once.
#include <memory>

#include "blocks/block_kind.h"
#include "blocks/steps.h"

namespace canrun {
namespace {

class Mamba2Attention : public Block {
 public:
  explicit Mamba2Attention(const BlockPlace& place)
      : place_(place), mamba_(make_block("mamba2", place)), attention_(make_block("attention", place)) {}

  void visit(TensorVisitor& v) override {
    mamba_->visit(v);
    attention_->visit(v);
  }

  void emit(ProgramBuilder& program, const BlockIo& io) override {
    const DecoderSpec& spec = place_.spec;
    const std::string& s = place_.steps;
    mamba_->emit(program, io);
    ValueId attention_in = io.in;
    if (spec.attention_in_scale != 1.0f) {
      attention_in = program.value(s + "attention_in", spec.hidden_size);
      program.add<ScaleColumnsStep>(Step::Info{s + "attention_in_scale", {io.in}, {attention_in}},
                                    std::vector<float>{spec.attention_in_scale});
    }
    const ValueId attention_out = program.value(s + "attention_out", spec.hidden_size);
    attention_->emit(program, {attention_in, attention_out, io.rope});
    program.add<AddStep>(Step::Info{s + "mixer_sum", {io.out, attention_out}, {io.out}}, spec.attention_out_scale);
  }

 private:
  BlockPlace place_;
  std::unique_ptr<Block> mamba_, attention_;
};

const BlockKindRegistration registration("mamba2_attention", [](const BlockPlace& place) {
  return std::make_unique<Mamba2Attention>(place);
});

}  // namespace
}  // namespace canrun
