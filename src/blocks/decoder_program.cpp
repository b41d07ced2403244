#include "blocks/decoder_program.h"

#include <algorithm>
#include <string>

#include "blocks/block_kind.h"
#include "blocks/hyper_connections.h"
#include "blocks/per_layer_inputs.h"
#include "blocks/rope_table.h"
#include "blocks/steps.h"
#include "program/program_builder.h"
#include "program/step_context.h"
#include "util/error.h"
#include "vision/qwen_vision.h"

namespace canrun {
namespace {

// The spec, kept by the program: block kinds read their settings from it while running.
struct SpecPart : ProgramPart {
  explicit SpecPart(DecoderSpec s) : spec(std::move(s)) {}
  DecoderSpec spec;
};

// outputs {x [tokens, embedding width]}: the tokens' embeddings (times the family's scale).
class EmbedStep : public Step {
 public:
  EmbedStep(Info info, const DecoderSpec& spec, const WeightMatrix& table)
      : Step(std::move(info)), spec_(spec), table_(table) {}
  std::string_view kind() const override { return "embed"; }
  bool row_wise() const override { return true; }

  void run(StepContext& c) const override {
    for (int32_t id : c.tokens())
      if (id < 0 || id >= spec_.vocab_size)
        fail(ErrorKind::kRuntime, "token id " + std::to_string(id) + " is outside the vocabulary of " +
                                      std::to_string(spec_.vocab_size));
    float* x = c.value(outputs()[0]);
    c.kernels().embed(table_, c.tokens().data(), c.count(), x);
    if (spec_.embedding_scale != 1.0f) c.kernels().scale(x, c.floats(outputs()[0]), spec_.embedding_scale);
  }

 private:
  const DecoderSpec& spec_;
  const WeightMatrix& table_;
};

// inputs {x [tokens, hidden]}, outputs {x}: x plus the learned embeddings of the tokens' positions.
class PositionsStep : public Step {
 public:
  PositionsStep(Info info, const DecoderSpec& spec, const FloatBuffer& positions)
      : Step(std::move(info)), spec_(spec), positions_(positions) {}
  std::string_view kind() const override { return "positions"; }

  void run(StepContext& c) const override {
    const int64_t hidden = spec_.hidden_size, count = c.count();
    if (c.start() + count > spec_.max_positions)
      fail(ErrorKind::kRuntime, "position " + std::to_string(c.start() + count - 1) + " is past the " +
                                    std::to_string(spec_.max_positions) + " learned positions");
    float* x = c.value(outputs()[0]);
    for (int64_t t = 0; t < count; ++t)
      c.kernels().add_scaled(x + t * hidden, positions_.data() + (c.start() + t + spec_.position_offset) * hidden,
                             hidden, 1.0f);
  }

 private:
  const DecoderSpec& spec_;
  const FloatBuffer& positions_;
};

// inputs {x [tokens, hidden]}, outputs {x}: x plus the embedding of each token's type, the
// sequence's type at its position (type 0 where the sequence has none).
class TokenTypesStep : public Step {
 public:
  TokenTypesStep(Info info, const DecoderSpec& spec, const FloatBuffer& table)
      : Step(std::move(info)), spec_(spec), table_(table) {}
  std::string_view kind() const override { return "token_types"; }

  void run(StepContext& c) const override {
    const std::vector<int32_t>& types = c.state().token_types();
    const int64_t hidden = spec_.hidden_size;
    float* x = c.value(outputs()[0]);
    for (int64_t t = 0; t < c.count(); ++t) {
      const size_t position = static_cast<size_t>(c.start() + t);
      const int32_t type = position < types.size() ? types[position] : 0;
      if (type < 0 || type >= spec_.type_vocab_size)
        fail(ErrorKind::kRuntime, "token type " + std::to_string(type) + " is outside the model's " +
                                      std::to_string(spec_.type_vocab_size) + " types (type_vocab_size)");
      c.kernels().add_scaled(x + t * hidden, table_.data() + type * hidden, hidden, 1.0f);
    }
  }

 private:
  const DecoderSpec& spec_;
  const FloatBuffer& table_;
};

// inputs {x [tokens, hidden]}, outputs {x}: the rows of a prompt's image tokens take the vision
// tower's features, or with `deepstack_layer` >= 0 add the features that layer adds (DeepStack).
// Rows of other tokens, and sequences without images, pass unchanged.
class VisualFeaturesStep : public Step {
 public:
  VisualFeaturesStep(Info info, int64_t deepstack_layer) : Step(std::move(info)), deepstack_layer_(deepstack_layer) {}
  std::string_view kind() const override { return "visual_features"; }

  void run(StepContext& c) const override {
    const VisualInputs* visual = c.state().visual();
    if (visual == nullptr) return;
    const int64_t hidden = c.width(outputs()[0]);
    const std::vector<float>& features =
        deepstack_layer_ < 0 ? visual->embeds : visual->deepstack[static_cast<size_t>(deepstack_layer_)];
    float* x = c.value(outputs()[0]);
    for (int64_t t = 0; t < c.count(); ++t) {
      const int64_t row = visual->image_row(c.start() + t);
      if (row < 0) continue;
      const float* from = features.data() + row * hidden;
      if (deepstack_layer_ < 0)
        std::copy(from, from + hidden, x + t * hidden);
      else
        c.kernels().add_scaled(x + t * hidden, from, hidden, 1.0f);
    }
  }

 private:
  int64_t deepstack_layer_;
};

// What the decoder itself holds besides its blocks: embeddings, each layer's norms (and mixes of its
// hyper-connected streams), final norm, head.
struct LayerWeights {
  NormWeights attn, post_attn, mlp, post_mlp;
  NormWeights post_mlp_alone, experts, post_experts;  // spec.experts_beside_mlp
  FloatBuffer scalar;  // names.layer_scalar's one value
  HyperMixWeights attn_mix, mlp_mix;  // spec.hyper
};
struct DecoderWeights : ProgramPart {
  WeightMatrix embed_tokens;    // [vocab, embedding width]
  WeightMatrix project_in, project_out;  // spec.embed_dim
  FloatBuffer no_bias;
  FloatBuffer embed_positions;  // learned positions, empty when rotary
  FloatBuffer token_types;      // [type_vocab_size, hidden], empty when the family has none
  NormWeights embed_norm;
  std::vector<LayerWeights> norms;
  NormWeights final_norm;
  WeightMatrix lm_head;  // when tied, embed_tokens viewed in place
  FloatBuffer lm_head_bias;
  HyperMixWeights head_mix;  // spec.hyper
};

std::string layer_name(const std::string& prefix, int64_t layer) { return prefix + "." + std::to_string(layer) + "."; }

class DecoderAssembly {
 public:
  DecoderAssembly(const DecoderSpec& spec, Shard shard, TensorVisitor& tensors)
      : spec_(spec), shard_(shard), tensors_(tensors) {}

  Program build() {
    const DecoderSpec& spec = program_.keep(std::make_unique<SpecPart>(spec_)).spec;
    DecoderWeights& w = program_.keep(std::make_unique<DecoderWeights>());
    const WeightNames& n = spec.names;
    const int64_t hidden = spec.hidden_size, width = spec.embed_dim > 0 ? spec.embed_dim : hidden;
    w.embed_tokens = tensors_.embeddings(n.embed + ".weight", spec.vocab_size, width);
    if (spec.embed_dim > 0) w.project_in = tensors_.plain_matrix(n.project_in + ".weight", hidden, width);
    if (!n.positions.empty())
      w.embed_positions = tensors_.tensor(n.positions + ".weight", {spec.max_positions + spec.position_offset, hidden});
    if (!n.token_types.empty())
      w.token_types = tensors_.tensor(n.token_types + ".weight", {spec.type_vocab_size, hidden});
    w.embed_norm = visit_norm(tensors_, spec.norm, n.embed_norm, hidden);
    // transformers' layer 0 reads x after the last of these steps.
    const ModuleMatch layers_input{n.layers + ".0", true};
    const bool hyper = spec.hyper.streams > 0;
    // With hyper-connections x holds every stream of the residual stream.
    const ValueId x = program_.value("x", hyper ? spec.hyper.streams * hidden : hidden);
    const bool images = spec.image_token_id >= 0;
    const bool last_is_embed = spec.embed_dim == 0 && n.positions.empty() && !images && n.embed_norm.empty();
    if (hyper) {
      const ValueId embedded = program_.value("embedded", hidden);
      program_.add<EmbedStep>(Step::Info{"embed", {}, {embedded}}, spec, w.embed_tokens);
      add_stream_copies(program_, embedded, x);
    } else if (spec.embed_dim > 0) {
      const ValueId embedded = program_.value("embedded", width);
      program_.add<EmbedStep>(Step::Info{"embed", {}, {embedded}}, spec, w.embed_tokens);
      add_linear(program_, "project_in", embedded, x, w.project_in, w.no_bias, width,
                 n.positions.empty() ? layers_input : ModuleMatch{n.project_in});
    } else {
      program_.add<EmbedStep>(Step::Info{"embed", {}, {x}, last_is_embed ? layers_input : ModuleMatch{}}, spec,
                              w.embed_tokens);
    }
    // The last of the embedding steps is what transformers' layer 0 reads.
    const auto embedding_match = [&](bool last) { return last ? layers_input : ModuleMatch{}; };
    if (!n.positions.empty())
      program_.add<PositionsStep>(
          Step::Info{"positions", {x}, {x}, embedding_match(n.token_types.empty() && n.embed_norm.empty())}, spec,
          w.embed_positions);
    if (!n.token_types.empty())
      program_.add<TokenTypesStep>(Step::Info{"token_types", {x}, {x}, embedding_match(n.embed_norm.empty())}, spec,
                                   w.token_types);
    if (!n.embed_norm.empty())
      program_.add<NormStep>(Step::Info{"embed_norm", {x}, {x}, layers_input}, w.embed_norm, spec.norm, hidden);
    if (images) program_.add<VisualFeaturesStep>(Step::Info{"image_features", {x}, {x}, layers_input}, -1);
    ValueId rope = -1, local_rope = -1;
    if (spec.rotary) {
      rope = program_.value("rope", spec.rope.rotary_dim);
      program_.add<RopeTableStep>(Step::Info{"rope", {}, {rope}}, spec.rope);
    }
    if (spec.rotary && spec.use_local_rope) {
      local_rope = program_.value("rope_local", spec.local_rope.rotary_dim);
      program_.add<RopeTableStep>(Step::Info{"rope_local", {}, {local_rope}}, spec.local_rope);
    }
    if (spec.per_layer_input_dim > 0) per_layer_inputs_ = add_per_layer_inputs(program_, tensors_, spec, x);
    w.norms.resize(static_cast<size_t>(spec.num_layers));
    for (int64_t i = 0; i < spec.num_layers; ++i) {
      const bool local = spec.use_local_rope && spec.sliding_window[static_cast<size_t>(i)] > 0;
      layer(spec, shard_layout(spec, shard_, i), i, x, local ? local_rope : rope, w.norms[static_cast<size_t>(i)]);
      if (i < deepstack_layers(spec))
        program_.add<VisualFeaturesStep>(Step::Info{layer_steps(i) + "deepstack", {x}, {x}}, i);
    }
    w.final_norm = visit_norm(tensors_, spec.norm, n.final_norm, hidden);
    if (spec.output == ModelOutput::kHiddenStates) {
      // An encoder's pass ends with every token's hidden state (after the final norm where it has one).
      if (!n.final_norm.empty())
        program_.add<NormStep>(Step::Info{"final_norm", {x}, {x}, {n.final_norm}}, w.final_norm, spec.norm, hidden);
      program_.set_output(x);
      return program_.finish();
    }
    if (hyper) w.head_mix = visit_head_mix(tensors_, spec, n.hc_head);
    if (spec.embed_dim > 0) w.project_out = tensors_.plain_matrix(n.project_out + ".weight", width, hidden);
    w.lm_head = spec.tie_embeddings ? tensors_.tied_head(n.embed + ".weight", w.embed_tokens)
                                    : tensors_.plain_matrix(n.lm_head + ".weight", spec.vocab_size, width);
    if (spec.lm_head_bias)
      w.lm_head_bias = tensors_.vector(n.lm_head + ".bias", spec.vocab_size, TensorRole::kBias);

    // Generation needs the last position's logits only.
    ValueId last = program_.value("last", program_.info(x).width, ValueRows::kLast);
    program_.add<LastRowStep>(Step::Info{"last", {x}, {last}});
    if (hyper) last = add_head_mix(program_, spec, w.head_mix, last, {n.hc_head});
    if (!n.final_norm.empty())
      program_.add<NormStep>(Step::Info{"final_norm", {last}, {last}, {n.final_norm}}, w.final_norm, spec.norm, hidden);
    ValueId head_in = last;
    if (spec.embed_dim > 0) {
      head_in = program_.value("last_projected", width, ValueRows::kLast);
      add_linear(program_, "project_out", last, head_in, w.project_out, w.no_bias, hidden, {n.project_out});
    }
    const ValueId logits = program_.value("logits", spec.vocab_size, ValueRows::kLast);
    add_linear(program_, "lm_head", head_in, logits, w.lm_head, w.lm_head_bias, width, {n.lm_head});
    if (spec.logits_scale != 1.0f || spec.final_softcap > 0)
      program_.add<ScaleSoftcapStep>(Step::Info{"logits", {logits}, {logits}}, spec.logits_scale, spec.final_softcap);
    program_.set_output(logits);
    return program_.finish();
  }

 private:
  // Norms, token mixer and feed-forward block of layer i, updating the residual stream x.
  void layer(const DecoderSpec& spec, const ShardLayout& layout, int64_t i, ValueId x, ValueId rope,
             LayerWeights& norms) {
    const WeightNames& n = spec.names;
    const int64_t hidden = spec.hidden_size;
    const std::string tensors = layer_name(n.layers, i), s = layer_steps(i);
    const auto norm_name = [&](const std::string& name) { return name.empty() ? "" : tensors + name; };
    const BlockPlace place{spec, i, shard_, layout, tensors, s};
    if (mixer_kind(spec, i) == "none") return single_block_layer(place, ffn_kind(spec, i), n.mlp_norm, x, rope, norms);
    if (ffn_kind(spec, i) == "none") return single_block_layer(place, mixer_kind(spec, i), n.attn_norm, x, rope, norms);
    if (spec.hyper.streams > 0) return hyper_layer(place, x, rope, norms);
    std::unique_ptr<Block> mixer_block = make_block(mixer_kind(spec, i), place);
    std::unique_ptr<Block> ffn_block = make_block(ffn_kind(spec, i), place);
    const std::string attn_norm = layer_attn_norm(spec, i);
    // The checkpoint's order: attention norm, attention, its post norm, MLP norm, MLP, its post norm.
    norms.attn = visit_norm(tensors_, spec.norm, norm_name(attn_norm), hidden);
    mixer_block->visit(tensors_);
    norms.post_attn = visit_norm(tensors_, spec.norm, norm_name(n.post_attn_norm), hidden);
    norms.mlp = visit_norm(tensors_, spec.norm, norm_name(n.mlp_norm), hidden);
    ffn_block->visit(tensors_);
    norms.post_mlp = visit_norm(tensors_, spec.norm, norm_name(n.post_mlp_norm), hidden);
    std::unique_ptr<Block> experts_block;
    if (spec.experts_beside_mlp) {
      norms.post_mlp_alone = visit_norm(tensors_, spec.norm, norm_name(n.post_mlp_alone_norm), hidden);
      norms.experts = visit_norm(tensors_, spec.norm, norm_name(n.experts_norm), hidden);
      experts_block = make_block("routed_experts", place);
      experts_block->visit(tensors_);
      norms.post_experts = visit_norm(tensors_, spec.norm, norm_name(n.post_experts_norm), hidden);
    }
    if (!n.layer_scalar.empty()) norms.scalar = tensors_.vector(tensors + n.layer_scalar, 1, TensorRole::kNorm);
    Block& mixer = program_.keep(std::move(mixer_block));
    Block& ffn = program_.keep(std::move(ffn_block));

    const bool sharded = shard_.size > 1;
    // A norm step is named by its place in the layer ("attn_norm"); its module is the checkpoint's
    // name for it ("input_layernorm").
    const auto norm = [&](const std::string& step, const std::string& name, const NormWeights& weights, ValueId in,
                          ValueId out) {
      program_.add<NormStep>(Step::Info{s + step, {in}, {out}, {tensors + name}}, weights, spec.norm, hidden);
    };
    const auto normed = [&](const std::string& step, const std::string& name, const NormWeights& weights) {
      const ValueId out = program_.value(s + step, hidden);
      norm(step, name, weights, x, out);
      return out;
    };
    const auto all_reduce = [&](const std::string& step, ValueId value) {
      if (sharded) program_.add<AllReduceStep>(Step::Info{s + step, {value}, {value}});
    };
    const ModuleMatch layer_output{n.layers + "." + std::to_string(i)};

    const bool post_norm = spec.residual == Residual::kPostNorm;
    const ValueId attn_in = attn_norm.empty() || post_norm ? x : normed("attn_norm", attn_norm, norms.attn);
    const ValueId attn_out = program_.value(s + "attn_out", hidden);
    mixer.emit(program_, {attn_in, attn_out, rope});
    // A parallel residual sums attention and MLP partials first and reduces once.
    const bool parallel = spec.residual == Residual::kParallel;
    const bool reduce_once = parallel && n.post_attn_norm.empty();
    if (!reduce_once) all_reduce("attn_all_reduce", attn_out);
    if (!n.post_attn_norm.empty()) norm("post_attn_norm", n.post_attn_norm, norms.post_attn, attn_out, attn_out);
    const ValueId mlp_out = program_.value(s + "mlp_out", hidden);
    if (parallel) {
      // x + attn(n1(x)) + mlp(n2(x)), n2 = n1 when the family has one norm per layer.
      const ValueId mlp_in = n.mlp_norm.empty() ? attn_in : normed("mlp_norm", n.mlp_norm, norms.mlp);
      ffn.emit(program_, {mlp_in, mlp_out, rope});
      if (!reduce_once) all_reduce("mlp_all_reduce", mlp_out);
      program_.add<AddStep>(Step::Info{s + "branch_sum", {mlp_out, attn_out}, {mlp_out}});
      if (reduce_once) all_reduce("layer_all_reduce", mlp_out);
      program_.add<AddStep>(Step::Info{s + "residual", {x, mlp_out}, {x}, layer_output});
      return;
    }
    if (spec.residual == Residual::kPostNorm) {
      // x = n1(x + attn(x)); x = n2(x + mlp(x)).
      program_.add<AddStep>(Step::Info{s + "attn_residual", {x, attn_out}, {x}});
      if (!attn_norm.empty()) norm("attn_norm", attn_norm, norms.attn, x, x);
      ffn.emit(program_, {x, mlp_out, rope});
      all_reduce("mlp_all_reduce", mlp_out);
      program_.add<AddStep>(Step::Info{s + "mlp_residual", {x, mlp_out}, {x}});
      norm("mlp_norm", n.mlp_norm, norms.mlp, x, x);
      return;
    }
    const float r = spec.residual_scale;
    // The residual stream between the blocks is what the MLP norm reads in transformers.
    const ModuleMatch mlp_norm_input = n.mlp_norm.empty() ? ModuleMatch{} : ModuleMatch{tensors + n.mlp_norm, true};
    program_.add<AddStep>(Step::Info{s + "attn_residual", {x, attn_out}, {x}, mlp_norm_input}, r);
    const ValueId mlp_in = n.mlp_norm.empty() ? x : normed("mlp_norm", n.mlp_norm, norms.mlp);
    ffn.emit(program_, {mlp_in, mlp_out, rope});
    all_reduce("mlp_all_reduce", mlp_out);
    if (experts_block) {
      // mlp_out = post_mlp_alone(mlp(...)) + post_experts(experts(experts_norm(x))), the router reading x.
      Block& experts = program_.keep(std::move(experts_block));
      norm("post_mlp_alone_norm", n.post_mlp_alone_norm, norms.post_mlp_alone, mlp_out, mlp_out);
      const ValueId experts_in = normed("experts_norm", n.experts_norm, norms.experts);
      const ValueId experts_out = program_.value(s + "experts_out", hidden);
      experts.emit(program_, {experts_in, experts_out, rope, x});
      all_reduce("experts_all_reduce", experts_out);
      norm("post_experts_norm", n.post_experts_norm, norms.post_experts, experts_out, experts_out);
      program_.add<AddStep>(Step::Info{s + "mlp_and_experts", {mlp_out, experts_out}, {mlp_out}});
    }
    if (!n.post_mlp_norm.empty()) norm("post_mlp_norm", n.post_mlp_norm, norms.post_mlp, mlp_out, mlp_out);
    // gemma4 goes on after the residual add: the layer's input, then its scalar.
    const bool per_layer_input = per_layer_inputs_ >= 0, scaled = !n.layer_scalar.empty();
    program_.add<AddStep>(
        Step::Info{s + "mlp_residual", {x, mlp_out}, {x}, per_layer_input || scaled ? ModuleMatch{} : layer_output}, r);
    if (per_layer_input)
      add_layer_input(program_, tensors_, spec, i, tensors, per_layer_inputs_, x, scaled ? ModuleMatch{} : layer_output);
    if (!scaled) return;
    // A listing (no weights) gets 1: the program's shape does not depend on the value.
    const float scalar = norms.scalar.empty() ? 1.0f : norms.scalar.data()[0];
    program_.add<ScaleColumnsStep>(Step::Info{s + "layer_scalar", {x}, {x}, layer_output}, std::vector<float>{scalar});
  }

  // A layer over hyper-connected streams x: each block reads the mix of x its weights make, normed,
  // and its output spreads back into x with the streams' own mix.
  void hyper_layer(const BlockPlace& place, ValueId x, ValueId rope, LayerWeights& norms) {
    const DecoderSpec& spec = place.spec;
    const WeightNames& n = spec.names;
    const int64_t hidden = spec.hidden_size;
    const std::string& s = place.steps;
    std::unique_ptr<Block> mixer_block = make_block(mixer_kind(spec, place.layer), place);
    std::unique_ptr<Block> ffn_block = make_block(ffn_kind(spec, place.layer), place);
    norms.attn = visit_norm(tensors_, spec.norm, place.tensors + n.attn_norm, hidden);
    mixer_block->visit(tensors_);
    norms.mlp = visit_norm(tensors_, spec.norm, place.tensors + n.mlp_norm, hidden);
    ffn_block->visit(tensors_);
    norms.attn_mix = visit_block_mix(tensors_, spec, place.tensors + n.attn_hc);
    norms.mlp_mix = visit_block_mix(tensors_, spec, place.tensors + n.ffn_hc);
    // `norm` names the step, `norm_tensor` the checkpoint's norm.
    const auto block = [&](const std::string& mix, const std::string& norm, const std::string& norm_tensor,
                           const NormWeights& weights, HyperMixWeights& mix_weights, Block& kind,
                           const std::string& out_name, ModuleMatch match) {
      ValueId post = -1, comb = -1;
      const ValueId collapsed = add_block_mix(program_, s + mix, spec, mix_weights, x, post, comb);
      const ValueId in = program_.value(s + norm, hidden), out = program_.value(s + out_name, hidden);
      program_.add<NormStep>(Step::Info{s + norm, {collapsed}, {in}, {place.tensors + norm_tensor}}, weights, spec.norm,
                             hidden);
      kind.emit(program_, {in, out, rope});
      if (shard_.size > 1) program_.add<AllReduceStep>(Step::Info{s + mix + "_all_reduce", {out}, {out}});
      add_block_output(program_, s + mix + "_output", x, out, post, comb, std::move(match));
    };
    block("attn_hc", "attn_norm", n.attn_norm, norms.attn, norms.attn_mix, program_.keep(std::move(mixer_block)),
          "attn_out", {});
    block("ffn_hc", "mlp_norm", n.mlp_norm, norms.mlp, norms.mlp_mix, program_.keep(std::move(ffn_block)), "mlp_out",
          {n.layers + "." + std::to_string(place.layer)});
  }

  // A layer holding one block (nemotron_h's): x += block(norm(x)), the norm `norm_name`.
  void single_block_layer(const BlockPlace& place, const std::string& kind, const std::string& norm_name, ValueId x,
                          ValueId rope, LayerWeights& norms) {
    const int64_t hidden = place.spec.hidden_size;
    const std::string& s = place.steps;
    std::unique_ptr<Block> made = make_block(kind, place);
    norms.attn = visit_norm(tensors_, place.spec.norm, place.tensors + norm_name, hidden);
    made->visit(tensors_);
    Block& block = program_.keep(std::move(made));
    const ValueId in = program_.value(s + "norm", hidden), out = program_.value(s + "block_out", hidden);
    program_.add<NormStep>(Step::Info{s + "norm", {x}, {in}, {place.tensors + norm_name}}, norms.attn,
                           place.spec.norm, hidden);
    block.emit(program_, {in, out, rope});
    if (shard_.size > 1) program_.add<AllReduceStep>(Step::Info{s + "all_reduce", {out}, {out}});
    const ModuleMatch layer_output{place.spec.names.layers + "." + std::to_string(place.layer)};
    program_.add<AddStep>(Step::Info{s + "residual", {x, out}, {x}, layer_output}, place.spec.residual_scale);
  }

  const DecoderSpec& spec_;
  Shard shard_;
  TensorVisitor& tensors_;
  ProgramBuilder program_;
  ValueId per_layer_inputs_ = -1;  // spec.per_layer_input_dim
};

}  // namespace

Program build_decoder_program(const DecoderSpec& spec, Shard shard, TensorVisitor& tensors) {
  return DecoderAssembly(spec, shard, tensors).build();
}

std::vector<TensorInfo> decoder_tensors(const DecoderSpec& spec, Shard shard) {
  TensorLister lister(spec.conv1d);
  build_decoder_program(spec, shard, lister);
  if (spec.vision)  // every worker holds the whole tower
    for (TensorInfo& tensor : vision_tower_tensors(*spec.vision)) lister.tensors.push_back(std::move(tensor));
  return lister.tensors;
}

Program decoder_program_shape(const DecoderSpec& spec, Shard shard) {
  TensorLister lister(spec.conv1d);
  return build_decoder_program(spec, shard, lister);
}

}  // namespace canrun
