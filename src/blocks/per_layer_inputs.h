// gemma4's per-layer inputs (spec.per_layer_input_dim): each token gets a small input per layer,
// made once from its own embedding row in embed_tokens_per_layer and a projection of its scaled
// embeddings; each layer, after its MLP, gates that input with the residual stream and adds its
// projection back. Every rank computes all of it: the weights are small and read whole.
#pragma once

#include <string>

#include "models/decoder_spec.h"
#include "program/program_builder.h"
#include "program/tensor_visitor.h"

namespace canrun {

// Visits the model's per-layer tensors and appends the steps that compute every layer's input,
// [tokens, layers * dim], from the token ids and x, the scaled embeddings; returns that value.
ValueId add_per_layer_inputs(ProgramBuilder& program, TensorVisitor& tensors, const DecoderSpec& spec, ValueId x);

// Layer `layer`'s part: visits its gate, projection and norm (under `tensors_prefix`) and appends
// x += norm(projection(act(gate(x)) * input_layer)); `match` names the step's transformers module.
void add_layer_input(ProgramBuilder& program, TensorVisitor& tensors, const DecoderSpec& spec, int64_t layer,
                     const std::string& tensors_prefix, ValueId inputs, ValueId x, ModuleMatch match);

}  // namespace canrun
