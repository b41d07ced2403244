#include "lab/planner.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "blocks/decoder_program.h"
#include "checkpoint/config_reader.h"
#include "models/registry.h"
#include "parallel/shard_layout.h"
#include "program/buffer_plan.h"

namespace canrun {
namespace {

constexpr int64_t kMaxSize = int64_t{1} << 24;
const std::vector<int64_t> kCoreCounts = {1, 2, 4, 8, 16};

// Attention projections, the gated MLP (of every expert) and the embeddings: the bulk of any
// decoder's weights. Biases and norms are added by the caller that knows them.
int64_t core_parameters(const ModelShape& shape, bool tied_embeddings) {
  const int64_t attention = shape.hidden_size * shape.head_dim * (2 * shape.num_heads + 2 * shape.num_kv_heads);
  const int64_t mlp = 3 * shape.hidden_size * shape.intermediate_size * std::max<int64_t>(1, shape.num_experts);
  return shape.num_layers * (attention + mlp) + shape.vocab_size * shape.hidden_size * (tied_embeddings ? 1 : 2);
}

// The first of several spellings families use for one field (e.g. the expert count).
std::optional<int64_t> first_integer(const ConfigReader& config, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (config.has(key)) return config.integer(key, std::nullopt, 0, kMaxSize);
  return std::nullopt;
}

std::string plural_cores(int64_t cores) { return std::to_string(cores) + (cores == 1 ? " core" : " cores"); }

}  // namespace

ModelShape shape_from_spec(const DecoderSpec& spec) {
  ModelShape shape;
  shape.model_type = spec.model_type;
  shape.source = "architecture spec";
  shape.num_layers = spec.num_layers;
  shape.hidden_size = spec.hidden_size;
  shape.intermediate_size = spec.intermediate_size;
  shape.num_heads = spec.num_heads;
  shape.num_kv_heads = spec.num_kv_heads;
  shape.head_dim = spec.head_dim;
  shape.vocab_size = spec.vocab_size;
  shape.spec = spec;
  if (spec.moe.num_experts > 0) {
    shape.num_experts = spec.moe.num_experts;
    shape.intermediate_size = spec.moe.expert_ffn;
  }
  // Exactly the tensors the loader reads (tied embeddings counted once).
  shape.parameters = 0;
  for (const TensorInfo& tensor : decoder_tensors(spec)) {
    int64_t n = 1;
    for (int64_t d : tensor.shape) n *= d;
    shape.parameters += n;
    if (spec.fp8.present() && tensor.role == TensorRole::kProjection) shape.fp8_parameters += n;
  }
  return shape;
}

ModelShape shape_from_config(const Json& config, std::optional<int64_t> known_parameters) {
  const ConfigReader reader(config, "config");
  ModelShape shape;
  shape.model_type = reader.string("model_type", std::string("unknown"));
  shape.source = "generic estimate from config values";
  shape.hidden_size = reader.integer("hidden_size", std::nullopt, 1, kMaxSize);
  shape.num_layers = reader.integer("num_hidden_layers", std::nullopt, 1, kMaxSize);
  shape.num_heads = reader.integer("num_attention_heads", std::nullopt, 1, kMaxSize);
  // Absent kv heads mean multi-head attention, as in transformers.
  shape.num_kv_heads = reader.integer("num_key_value_heads", shape.num_heads, 1, kMaxSize);
  shape.head_dim = reader.integer("head_dim", std::max<int64_t>(1, shape.hidden_size / shape.num_heads), 1, kMaxSize);
  shape.num_experts = first_integer(reader, {"num_experts", "num_local_experts", "n_routed_experts"}).value_or(0);
  // GPT-2 style configs leave the MLP width at its 4 x hidden default.
  const int64_t dense_width = reader.integer("intermediate_size", 4 * shape.hidden_size, 1, kMaxSize);
  shape.intermediate_size =
      shape.num_experts > 0 ? reader.integer("moe_intermediate_size", dense_width, 1, kMaxSize) : dense_width;
  shape.vocab_size = reader.integer("vocab_size", known_parameters ? std::optional<int64_t>(0) : std::nullopt,
                                    known_parameters ? 0 : 1, kMaxSize);
  const bool tied = reader.boolean("tie_word_embeddings", false);
  shape.parameters = known_parameters ? *known_parameters : core_parameters(shape, tied);
  if (config.contains("quantization_config") && config.at("quantization_config").is_object() &&
      config.at("quantization_config").value("quant_method", std::string()) == "fp8")
    shape.fp8_parameters =
        std::max<int64_t>(0, shape.parameters - shape.vocab_size * shape.hidden_size * (tied ? 1 : 2));
  return shape;
}

ModelShape model_shape(const Json& config, std::optional<int64_t> known_parameters) {
  const ConfigReader reader(config, "config");
  try {
    return shape_from_spec(architecture_of(reader).read_spec(reader));
  } catch (const Error& error) {
    if (error.kind() != ErrorKind::kUnsupportedArchitecture) throw;
    return shape_from_config(config, known_parameters);
  }
}

namespace {

// A Llama-layout decoder of the shape's sizes, for families canrun cannot read yet.
DecoderSpec stand_in_spec(const ModelShape& shape, int64_t positions) {
  DecoderSpec spec;
  spec.model_type = shape.model_type;
  spec.vocab_size = std::max<int64_t>(1, shape.vocab_size);
  spec.hidden_size = shape.hidden_size;
  spec.intermediate_size = shape.intermediate_size;
  spec.num_layers = shape.num_layers;
  spec.num_heads = shape.num_heads;
  spec.num_kv_heads = shape.num_kv_heads;
  spec.head_dim = shape.head_dim;
  spec.max_positions = positions;
  spec.rope.rotary_dim = shape.head_dim - shape.head_dim % 2;
  spec.rotary = spec.rope.rotary_dim > 0;
  spec.sliding_window.assign(static_cast<size_t>(shape.num_layers), 0);
  if (shape.num_experts > 0) {
    spec.moe.num_experts = shape.num_experts;
    spec.moe.top_k = 1;
    spec.moe.expert_ffn = shape.intermediate_size;
    spec.moe_layers.assign(static_cast<size_t>(shape.num_layers), true);
  }
  return spec;
}

int64_t scaled(int64_t f32_bytes, DType dtype) {
  return f32_bytes / static_cast<int64_t>(sizeof(float)) * static_cast<int64_t>(dtype_size(dtype));
}

// FP8 checkpoints' projections stay FP8 where the engine keeps weights as stored.
DType fp8_weight_dtype(const PlannerOptions& options) {
  return options.weight_dtype == DType::kF32 ? DType::kF32 : DType::kF8E4M3;
}

// The bytes the engine holds per listed element of `tensor`, as its loader keeps it.
int64_t held_element_bytes(const TensorInfo& tensor, const DecoderSpec& spec, const PlannerOptions& options) {
  switch (tensor.role) {
    case TensorRole::kProjection:
      return static_cast<int64_t>(dtype_size(spec.fp8.present() ? fp8_weight_dtype(options) : options.weight_dtype));
    case TensorRole::kMatrix:
    case TensorRole::kTable:
      return static_cast<int64_t>(dtype_size(options.weight_dtype));
    case TensorRole::kPacked:  // MXFP4: each block byte becomes two f32 values; the scales are folded in
      return tensor.name.ends_with("_blocks") ? 2 * 4 : 0;
    case TensorRole::kFloatTensor:
    case TensorRole::kNorm:
    case TensorRole::kOffsetNorm:
    case TensorRole::kBias:
    case TensorRole::kIndices:  // int32
      return 4;
  }
  return 4;
}

// The resident bytes of `tensor`: all it holds, but of a table read in place only the pages of
// the rows the planned run's tokens look up (each row may straddle one more page). A packed
// integer checkpoint's projections stay packed where the engine keeps weights as stored: bits / 8
// bytes a weight and an f32 scale per row and group of inputs.
int64_t resident_bytes(const TensorInfo& tensor, const DecoderSpec& spec, const PlannerOptions& options) {
  if (tensor.role == TensorRole::kProjection && spec.packed_int.present() && options.weight_dtype != DType::kF32 &&
      !tensor.shape.empty()) {
    const int64_t inputs = tensor.shape.back();
    const int64_t group = spec.packed_int.group_size > 0 ? spec.packed_int.group_size : inputs;
    return tensor.held * spec.packed_int.bits / 8 + (tensor.held + group - 1) / group * 4;
  }
  const int64_t bytes = tensor.held * held_element_bytes(tensor, spec, options);
  if (tensor.role != TensorRole::kTable || !options.tables_in_place || tensor.shape.size() != 2) return bytes;
  constexpr int64_t kPageBytes = 4096;
  const int64_t row_bytes = bytes / std::max<int64_t>(1, tensor.shape[0]);
  const int64_t pages_per_row = (row_bytes + kPageBytes - 1) / kPageBytes + 1;
  return std::min(bytes, (options.prompt_tokens + options.new_tokens) * pages_per_row * kPageBytes);
}

// The bytes of the weights worker `shard` keeps (all of them for the single worker of Shard{}).
int64_t held_weight_bytes(const DecoderSpec& spec, const PlannerOptions& options, Shard shard) {
  int64_t bytes = 0;
  for (const TensorInfo& tensor : decoder_tensors(spec, shard)) bytes += resident_bytes(tensor, spec, options);
  return bytes;
}

// Worker 0's weights: it is the busiest, as the first workers take one more of what does not divide.
int64_t worker_weight_bytes(const ModelShape& shape, const PlannerOptions& options, int64_t weight_bytes,
                            int64_t cores) {
  if (cores == 1) return weight_bytes;
  const Shard first{0, static_cast<int>(cores)};
  if (shape.spec) return held_weight_bytes(*shape.spec, options, first);
  // A Llama-layout stand-in's share, applied to the weights estimated from the config.
  const DecoderSpec stand_in = stand_in_spec(shape, options.prompt_tokens + options.new_tokens);
  const double share = static_cast<double>(held_weight_bytes(stand_in, options, first)) /
                       static_cast<double>(held_weight_bytes(stand_in, options, Shard{}));
  return static_cast<int64_t>(std::ceil(static_cast<double>(weight_bytes) * share));
}

}  // namespace

MemoryEstimate estimate_memory(const ModelShape& shape, const PlannerOptions& options) {
  const int64_t tokens = options.prompt_tokens + options.new_tokens;
  const Program program = decoder_program_shape(shape.spec ? *shape.spec : stand_in_spec(shape, tokens));
  MemoryEstimate estimate;
  // From the spec, tensor by tensor as the loader holds them; from config values, every
  // parameter in the weights' dtype.
  estimate.weight_bytes =
      shape.spec ? held_weight_bytes(*shape.spec, options, Shard{})
                 : (shape.parameters - shape.fp8_parameters) * static_cast<int64_t>(dtype_size(options.weight_dtype)) +
                       shape.fp8_parameters * static_cast<int64_t>(dtype_size(fp8_weight_dtype(options)));
  estimate.kv_cache_bytes = program.state_bytes({tokens, options.kv_dtype});
  estimate.activation_bytes = scaled(plan_buffers(program, options.prompt_tokens).arena_bytes, options.activation_dtype);
  estimate.overhead_bytes = options.overhead_bytes;
  return estimate;
}

namespace {

int64_t worker_bytes(const ModelShape& shape, const PlannerOptions& options, const MemoryEstimate& estimate,
                     int64_t cores) {
  return worker_weight_bytes(shape, options, estimate.weight_bytes, cores) + estimate.kv_cache_bytes +
         estimate.activation_bytes + estimate.overhead_bytes;
}

}  // namespace

int64_t per_core_bytes(const ModelShape& shape, const PlannerOptions& options, int64_t cores) {
  return worker_bytes(shape, options, estimate_memory(shape, options), cores);
}

CorePlan plan_cores(const ModelShape& shape, const DeviceProfile& profile, const PlannerOptions& options) {
  CorePlan plan;
  plan.estimate = estimate_memory(shape, options);
  const MemoryEstimate& estimate = plan.estimate;
  const std::string breakdown = " (weights " + format_bytes(estimate.weight_bytes) + ", KV cache " +
                                format_bytes(estimate.kv_cache_bytes) + ", activations " +
                                format_bytes(estimate.activation_bytes) + ", overhead " +
                                format_bytes(estimate.overhead_bytes) + ")";
  const std::string unshardable = shape.spec ? unshardable_reason(*shape.spec) : "";
  plan.largest_cores_tried = 1;
  for (const int64_t cores : kCoreCounts) {
    if (cores > profile.max_cores || (cores > 1 && !unshardable.empty())) break;
    plan.largest_cores_tried = cores;
    plan.per_core_bytes = worker_bytes(shape, options, estimate, cores);
    if (plan.per_core_bytes > profile.memory_per_core_bytes) continue;
    plan.cores = cores;
    plan.tp_degree = cores;
    plan.ep_degree = shape.num_experts > 0 ? cores : 1;
    plan.detail = plural_cores(cores) + " of " + profile.name + ": " + format_bytes(plan.per_core_bytes) +
                  " per core of " + format_bytes(profile.memory_per_core_bytes) + breakdown;
    return plan;
  }
  const int64_t largest = plan.largest_cores_tried;
  plan.reason = "needs more than " + plural_cores(largest);
  plan.reason_code = "needs_memory";
  plan.detail = format_bytes(plan.per_core_bytes) + " per core at " + plural_cores(largest) + " of " + profile.name +
                ", which holds " + format_bytes(profile.memory_per_core_bytes) + ": " +
                format_bytes(plan.per_core_bytes - profile.memory_per_core_bytes) + " more than it has" + breakdown;
  if (!unshardable.empty()) {
    plan.reason_code = "cannot_shard";
    if (profile.max_cores > 1) plan.reason = "cannot be split, and " + plan.reason;
    plan.detail += "; " + unshardable;
    return plan;
  }
  // How many cores of this size would: the answer for a larger machine of the same kind.
  for (int64_t cores = largest * 2; cores <= kMaxPlannedCores; cores *= 2) {
    if (worker_bytes(shape, options, estimate, cores) > profile.memory_per_core_bytes) continue;
    plan.cores_that_would_hold = cores;
    plan.detail += "; " + plural_cores(cores) + " of " + format_bytes(profile.memory_per_core_bytes) +
                   " would hold it (tensor" + (shape.num_experts > 0 ? " and expert" : "") + " parallel over MPI)";
    break;
  }
  if (plan.cores_that_would_hold == 0)
    plan.detail += "; no number of cores of " + format_bytes(profile.memory_per_core_bytes) +
                   " would hold it as canrun splits models (attention divides over the key/value heads at most, "
                   "and every worker keeps the embeddings)";
  return plan;
}

}  // namespace canrun
