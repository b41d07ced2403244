// Memory estimate and core planning: how much memory a model needs to generate, and the
// fewest cores of a device profile (1, 2, 4, 8 or 16) that hold it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lab/device_profile.h"
#include "models/decoder_spec.h"
#include "tensor/dtype.h"
#include "util/json.h"

namespace canrun {

// The sizes the estimate needs, from an architecture's spec or read generically from a config.
struct ModelShape {
  std::string model_type;
  std::string source;  // "architecture spec" or "generic estimate from config values"
  int64_t parameters = 0;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // per expert for mixture-of-experts models
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;  // 0 when the config lacks it and the parameter count was given
  int64_t num_experts = 0;  // 0 for dense models
  // Of `parameters`, those an FP8 checkpoint (quantization_config fp8) stores in FP8: its layers'
  // projections. One byte each where the engine keeps weights as stored.
  int64_t fp8_parameters = 0;
  // The family's spec when canrun can read it: its model program gives the KV cache and the
  // activations. Without one, the program of a Llama-layout stand-in of these sizes does.
  std::optional<DecoderSpec> spec;
};

// Exact parameter count of the decoder the spec describes (tied embeddings counted once).
ModelShape shape_from_spec(const DecoderSpec& spec);

// For families canrun cannot read yet: sizes from the usual config.json fields, and the
// parameter count `known_parameters` when given, else counted from the sizes (attention, a
// gated MLP or every expert's, embeddings; shared experts and dense layers of MoE models are
// not counted). Errors name the missing field.
ModelShape shape_from_config(const Json& config, std::optional<int64_t> known_parameters);

// shape_from_spec when the registry has config's family (architecture_of), else shape_from_config.
ModelShape model_shape(const Json& config, std::optional<int64_t> known_parameters);

struct PlannerOptions {
  // The engine's planned compute stores weights in bf16, FP8 ones as FP8 and packed integer ones
  // packed; kF32: everything widened.
  DType weight_dtype = DType::kBF16;
  DType kv_dtype = DType::kBF16;
  DType activation_dtype = DType::kF32;  // accumulations and norms stay in f32
  int64_t prompt_tokens = 32;
  int64_t new_tokens = 32;
  int64_t overhead_bytes = int64_t{512} << 20;  // runtime, code, plan and collective buffers, per core
  // The embedding tables are read in place from the checkpoint's mapping (stored as held, not
  // widened): only the pages of the rows the run's tokens look up come in. Else counted whole.
  bool tables_in_place = false;
};

// Derived from the model program as the engine runs it: the per-sequence state for prompt + new
// tokens, and the buffer plan of the prompt's prefill, each scaled from the engine's f32 to the
// planned dtypes.
struct MemoryEstimate {
  int64_t weight_bytes = 0;
  int64_t kv_cache_bytes = 0;    // prompt + new tokens
  int64_t activation_bytes = 0;  // the prefill's buffer plan: its values live at once
  int64_t overhead_bytes = 0;
};

MemoryEstimate estimate_memory(const ModelShape& shape, const PlannerOptions& options);

// What one of `cores` workers needs: the busiest one's part of every split tensor (kv heads with
// their query heads, MLP columns, experts; where a count does not divide, the first workers take
// one more) and, conservatively, the whole KV cache, activations and overhead.
int64_t per_core_bytes(const ModelShape& shape, const PlannerOptions& options, int64_t cores);

inline constexpr int64_t kMaxPlannedCores = 4096;

struct CorePlan {
  MemoryEstimate estimate;
  int64_t cores = 0;  // 0: nothing fits
  int64_t tp_degree = 0;
  int64_t ep_degree = 0;
  int64_t per_core_bytes = 0;  // at `cores`, or at the largest count tried when nothing fits
  int64_t largest_cores_tried = 0;  // the largest core count the profile allowed the model
  std::string reason;          // when nothing fits, stable for grouping: "needs more than 16 cores"
  std::string reason_code;     // when nothing fits: "needs_memory" or "cannot_shard" (dataset.h's reason_codes)
  // When nothing fits: the fewest cores of the profile's per-core memory (past its maximum, up to
  // kMaxPlannedCores) that would hold the model as canrun shards it; 0 when none would.
  int64_t cores_that_would_hold = 0;
  std::string detail;          // the numbers behind the decision
  bool fits() const { return cores > 0; }
};

// The fewest cores from 1, 2, 4, 8, 16 (up to the profile's maximum) whose per-core memory holds
// the model as canrun shards it (one core for a model that cannot be split). Tensor parallelism
// spans all chosen cores; a mixture-of-experts model also spreads its experts over them.
CorePlan plan_cores(const ModelShape& shape, const DeviceProfile& profile, const PlannerOptions& options);

}  // namespace canrun
