// The activations of feed-forward layers: silu, gelu with the tanh approximation (gelu_new,
// gelu_pytorch_tanh), exact gelu (erf), relu and its square (relu2, nemotron_h), quick_gelu
// (x * sigmoid(1.702 x), Qwen2-VL's vision tower); and sigmoid, the output gate of gated
// attention (qwen3_5). One enum for the model specs and the kernels.
#pragma once

namespace canrun {

// kXielu (apertus) has learned scalars per layer: the dense MLP block runs it with them.
enum class Activation { kSilu, kGeluTanh, kGelu, kRelu, kRelu2, kQuickGelu, kSigmoid, kXielu };

}  // namespace canrun
