#include "blocks/per_layer_inputs.h"

#include <cmath>
#include <memory>

#include "blocks/block_kind.h"
#include "blocks/steps.h"
#include "program/step_context.h"
#include "util/error.h"

namespace canrun {
namespace {

struct PerLayerWeights : ProgramPart {
  WeightMatrix embed, projection;
  NormWeights projection_norm;
  FloatBuffer no_bias;
};

struct LayerInputWeights : ProgramPart {
  WeightMatrix gate, projection;
  NormWeights norm;
  FloatBuffer no_bias;
};

// outputs {[tokens, layers * dim]}: each token's row of embed_tokens_per_layer times sqrt(dim).
class PerLayerEmbedStep : public Step {
 public:
  PerLayerEmbedStep(Info info, const WeightMatrix& table, int64_t vocab, float scale)
      : Step(std::move(info)), table_(table), vocab_(vocab), scale_(scale) {}
  std::string_view kind() const override { return "per_layer_embed"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    for (int32_t id : c.tokens())
      if (id < 0 || id >= vocab_)
        fail(ErrorKind::kRuntime, "token id " + std::to_string(id) + " is outside the per-layer vocabulary of " +
                                      std::to_string(vocab_) + " (vocab_size_per_layer_input)");
    float* out = c.value(outputs()[0]);
    c.kernels().embed(table_, c.tokens().data(), c.count(), out);
    c.kernels().scale(out, c.floats(outputs()[0]), scale_);
  }

 private:
  const WeightMatrix& table_;
  int64_t vocab_;
  float scale_;
};

}  // namespace

ValueId add_per_layer_inputs(ProgramBuilder& program, TensorVisitor& tensors, const DecoderSpec& spec, ValueId x) {
  const WeightNames& n = spec.names;
  const int64_t dim = spec.per_layer_input_dim, width = spec.num_layers * dim, hidden = spec.hidden_size;
  PerLayerWeights& w = program.keep(std::make_unique<PerLayerWeights>());
  w.embed = tensors.embeddings(n.per_layer_embed + ".weight", spec.per_layer_vocab, width);
  w.projection = tensors.matrix(n.per_layer_model_projection, width, hidden);
  w.projection_norm = visit_norm(tensors, spec.norm, n.per_layer_projection_norm, dim);

  const ValueId embedded = program.value("per_layer_embedded", width);
  program.add<PerLayerEmbedStep>(Step::Info{"per_layer_embed", {}, {embedded}}, w.embed, spec.per_layer_vocab,
                                 static_cast<float>(std::sqrt(static_cast<double>(dim))));
  const ValueId inputs = program.value("per_layer_inputs", width);
  add_linear(program, "per_layer_model_projection", x, inputs, w.projection, w.no_bias, hidden);
  program.add<ScaleColumnsStep>(Step::Info{"per_layer_projection_scale", {inputs}, {inputs}},
                                std::vector<float>{static_cast<float>(1.0 / std::sqrt(static_cast<double>(hidden)))});
  program.add<NormStep>(Step::Info{"per_layer_projection_norm", {inputs}, {inputs}}, w.projection_norm, spec.norm,
                        dim);
  program.add<AddStep>(Step::Info{"per_layer_sum", {inputs, embedded}, {inputs}});
  program.add<ScaleColumnsStep>(Step::Info{"per_layer_input_scale", {inputs}, {inputs}},
                                std::vector<float>{static_cast<float>(std::sqrt(0.5))});
  return inputs;
}

void add_layer_input(ProgramBuilder& program, TensorVisitor& tensors, const DecoderSpec& spec, int64_t layer,
                     const std::string& tensors_prefix, ValueId inputs, ValueId x, ModuleMatch match) {
  const WeightNames& n = spec.names;
  const int64_t dim = spec.per_layer_input_dim, hidden = spec.hidden_size;
  const std::string& p = tensors_prefix;
  const std::string s = layer_steps(layer);
  LayerInputWeights& w = program.keep(std::make_unique<LayerInputWeights>());
  w.gate = tensors.matrix(p + n.per_layer_gate, dim, hidden);
  w.projection = tensors.matrix(p + n.per_layer_projection, hidden, dim);
  w.norm = visit_norm(tensors, spec.norm, p + n.post_per_layer_norm, hidden);

  const ValueId gate = program.value(s + "per_layer_gate", dim);
  const ValueId input = program.value(s + "per_layer_input", dim);
  const ValueId out = program.value(s + "per_layer_out", hidden);
  add_linear(program, s + "per_layer_input_gate", x, gate, w.gate, w.no_bias, hidden, {p + n.per_layer_gate});
  program.add<CopyColumnsStep>(Step::Info{s + "per_layer_input", {inputs}, {input}}, layer * dim);
  program.add<ActivationStep>(Step::Info{s + "per_layer_act_mul", {gate, input}, {gate}}, spec.activation);
  add_linear(program, s + "per_layer_projection", gate, out, w.projection, w.no_bias, dim,
             {p + n.per_layer_projection});
  program.add<NormStep>(Step::Info{s + "post_per_layer_norm", {out}, {out}, {p + n.post_per_layer_norm}}, w.norm,
                        spec.norm, hidden);
  program.add<AddStep>(Step::Info{s + "per_layer_residual", {x, out}, {x}, match});
}

}  // namespace canrun
