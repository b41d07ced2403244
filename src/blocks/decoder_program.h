// The model program of a decoder-only transformer: the token embeddings (learned positions,
// scale; an image-text-to-text model's image features in place of its image tokens'), the
// pass's rotary tables, then per layer its norms, its token mixer and feed-forward
// block (block kinds named by the spec) with their residual adds (deepseek_v4: the mixes of its
// hyper-connected residual streams) and, sharded, the sums over ranks after each block; then the
// final norm and the logits of the last position.
#pragma once

#include <vector>

#include "models/decoder_spec.h"
#include "parallel/shard.h"
#include "program/program.h"
#include "program/tensor_visitor.h"

namespace canrun {

// Visits every tensor of `spec` through `tensors` (this shard's part of each) and builds the
// program over what they return: loaded weights, or none when only listing.
Program build_decoder_program(const DecoderSpec& spec, Shard shard, TensorVisitor& tensors);

// The tensors a checkpoint of this spec holds, as published (names, stored shapes), with what
// `shard`'s worker keeps of each: the decoder's, then an image-text-to-text model's vision tower.
std::vector<TensorInfo> decoder_tensors(const DecoderSpec& spec, Shard shard = {});

// The program of `spec` without weights: for shapes, costs and memory only.
Program decoder_program_shape(const DecoderSpec& spec, Shard shard = {});

}  // namespace canrun
