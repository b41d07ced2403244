#include "parallel/shard_layout.h"

#include <string>

#include "util/error.h"

namespace canrun {

ShardLayout shard_layout(const DecoderSpec& spec, Shard shard, int64_t layer) {
  ShardLayout layout;
  const int64_t kv_heads = layer_kv_heads(spec, layer);
  layout.kv_heads = split_evenly(kv_heads, shard);
  const int64_t group = kv_heads > 0 ? spec.num_heads / kv_heads : 1;
  layout.query_heads = {layout.kv_heads.first * group, layout.kv_heads.count * group};
  layout.ffn = split_evenly(layer_ffn_width(spec, layer), shard);
  layout.shared_ffn = split_evenly(spec.moe.shared_ffn, shard);
  layout.experts = split_evenly(spec.moe.num_experts, shard);
  layout.channels = split_evenly(spec.hidden_size, shard);
  layout.mamba_groups = split_evenly(spec.mamba.groups, shard);
  layout.deltanet_key_heads = split_evenly(spec.deltanet.key_heads, shard);
  return layout;
}

std::string unshardable_reason(const DecoderSpec& spec) {
  if (spec.qk_norm_kind == QkNorm::kWhole)
    return spec.model_type + " normalises q and k over the whole projection width (qk norm across all heads)";
  return "";
}

void check_shardable(const DecoderSpec& spec, int cores) {
  const std::string reason = unshardable_reason(spec);
  if (cores == 1 || reason.empty()) return;
  fail(ErrorKind::kUnsupportedOption,
       reason + ": it cannot be split over --cores " + std::to_string(cores) + "; --cores 1 runs it unsharded");
}

}  // namespace canrun
