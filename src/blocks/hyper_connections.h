// deepseek_v4's manifold-constrained hyper-connections (HyperConnectionSpec): the residual stream
// as several streams per token, the mixes that sum them into a block's input and spread its output
// back, and the head's sum of them into one before the final norm.
#pragma once

#include <string>

#include "models/decoder_spec.h"
#include "program/program_builder.h"
#include "program/tensor_visitor.h"
#include "tensor/float_buffer.h"
#include "tensor/weight_matrix.h"

namespace canrun {

// A mix's learned projection of the normalised streams [mixes, streams * hidden], its bias
// [mixes] and scales (3 before a block: pre, post, comb; 1 for the head: pre).
struct HyperMixWeights {
  WeightMatrix projection;
  FloatBuffer bias, scales;
  FloatBuffer ones;  // the unweighted RMSNorm's weight
};

// A block's mix: "<prefix>_fn", "_base", "_scale" (hc_attn, hc_ffn).
HyperMixWeights visit_block_mix(TensorVisitor& tensors, const DecoderSpec& spec, const std::string& prefix);
// The head's: "<prefix>.hc_fn", ".hc_base", ".hc_scale" (model.hc_head).
HyperMixWeights visit_head_mix(TensorVisitor& tensors, const DecoderSpec& spec, const std::string& prefix);

// Appends streams [tokens, N * hidden] = the embeddings `embedded` [tokens, hidden], once per stream.
void add_stream_copies(ProgramBuilder& program, ValueId embedded, ValueId streams);

// Appends the mix before a block: returns its input [rows of `streams`, hidden], and sets `post`
// [rows, N] and `comb` [rows, N * N] for add_block_output. `name` prefixes its steps and values.
ValueId add_block_mix(ProgramBuilder& program, const std::string& name, const DecoderSpec& spec,
                      HyperMixWeights& weights, ValueId streams, ValueId& post, ValueId& comb);
// Appends streams[n] = post[n] * out + sum_m comb[m][n] * streams[m].
void add_block_output(ProgramBuilder& program, const std::string& name, ValueId streams, ValueId out, ValueId post,
                      ValueId comb, ModuleMatch match);
// Appends the head's sum of the streams of `last` (its rows, N * hidden) into one; returns it.
ValueId add_head_mix(ProgramBuilder& program, const DecoderSpec& spec, HyperMixWeights& weights, ValueId last,
                     ModuleMatch match);

}  // namespace canrun
