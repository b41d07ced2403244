#include "compile/forward_graph.h"

#include <algorithm>
#include <numeric>

namespace canrun {
namespace {

constexpr int64_t kFloat = sizeof(float);

class GraphBuilder {
 public:
  GraphBuilder(int64_t tokens, int64_t positions) {
    graph_.tokens = tokens;
    graph_.positions = positions;
  }

  int value(const std::string& name, int64_t floats) {
    graph_.values.push_back({name, floats * kFloat});
    return static_cast<int>(graph_.values.size() - 1);
  }

  void op(const std::string& name, const std::string& kind, std::vector<int> inputs, std::vector<int> outputs,
          int64_t flops = 0, int64_t weight_bytes = 0) {
    const int index = static_cast<int>(graph_.ops.size());
    for (int v : inputs) graph_.values[v].last = index;
    for (int v : outputs) {
      GraphValue& out = graph_.values[v];
      if (out.first < 0) out.first = index;
      out.last = index;
    }
    graph_.ops.push_back({name, kind, std::move(inputs), std::move(outputs), flops, weight_bytes});
  }

  // out = in @ w^T for `rows` rows; nothing when the family has no such matrix.
  int linear(const std::string& name, int in, const WeightMatrix& w, int64_t rows) {
    const int out = value(name, rows * w.rows());
    op(name, "linear", {in}, {out}, 2 * rows * w.rows() * w.cols(), w.rows() * w.cols() * dtype_bytes(w));
    return out;
  }

  int norm(const std::string& name, int in, int64_t floats) {
    const int out = value(name, floats);
    op(name, "norm", {in}, {out}, 4 * floats);
    return out;
  }

  ForwardGraph take() { return std::move(graph_); }

 private:
  static int64_t dtype_bytes(const WeightMatrix& w) { return w.dtype() == DType::kBF16 ? 2 : 4; }
  ForwardGraph graph_;
};

int64_t expert_flops(const ExpertWeights& e, int64_t rows) {
  return 2 * rows * (e.gate.rows() * e.gate.cols() + e.up.rows() * e.up.cols() + e.down.rows() * e.down.cols());
}

}  // namespace

int64_t ForwardGraph::flops() const {
  return std::accumulate(ops.begin(), ops.end(), int64_t{0}, [](int64_t s, const GraphOp& o) { return s + o.flops; });
}

int64_t ForwardGraph::weight_bytes() const {
  return std::accumulate(ops.begin(), ops.end(), int64_t{0},
                         [](int64_t s, const GraphOp& o) { return s + o.weight_bytes; });
}

ForwardGraph build_forward_graph(const DecoderSpec& spec, const DecoderWeights& weights, int64_t tokens,
                                 int64_t positions, int64_t shards) {
  GraphBuilder g(tokens, positions);
  const int64_t hidden = spec.hidden_size;
  const int64_t t = tokens;
  const int x = g.value("x", t * hidden);
  g.op("embed", "embed", {}, {x});
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const LayerWeights& layer = weights.layers[i];
    const std::string p = "layers." + std::to_string(i) + ".";
    const int attn_in = layer.attn_norm.present() ? g.norm(p + "attn_norm", x, t * hidden) : x;
    int q = -1, k = -1, v = -1;
    if (spec.latent_attention) {
      const LatentAttentionWeights& mla = layer.latent;
      if (!mla.q_a.empty()) {
        const int qa = g.linear(p + "q_a_proj", attn_in, mla.q_a, t);
        q = g.linear(p + "q_b_proj", g.norm(p + "q_a_norm", qa, t * mla.q_a.rows()), mla.q_b, t);
      } else {
        q = g.linear(p + "q_proj", attn_in, layer.q_proj, t);
      }
      const int kva = g.linear(p + "kv_a_proj", attn_in, mla.kv_a, t);
      k = g.linear(p + "kv_b_proj", g.norm(p + "kv_a_norm", kva, t * mla.kv_a.rows()), mla.kv_b, t);
    } else {
      q = g.linear(p + "q_proj", attn_in, layer.q_proj, t);
      k = g.linear(p + "k_proj", attn_in, layer.k_proj, t);
      v = g.linear(p + "v_proj", attn_in, layer.v_proj, t);
    }
    std::vector<int> qkv = {q, k};
    if (v >= 0) qkv.push_back(v);
    g.op(p + "rotary_cache_write", "rotary_cache_write", qkv, {});
    // The context has o_proj's input width: this shard's heads times the value width.
    const int64_t context_width = layer.o_proj.cols();
    const int context = g.value(p + "context", t * context_width);
    const int scores = g.value(p + "scores", positions);  // one query's scores at a time
    g.op(p + "attention", "attention", {q}, {context, scores},
         2 * 2 * t * context_width * std::min(positions, spec.max_positions));
    int attn_out = g.linear(p + "o_proj", context, layer.o_proj, t);
    if (shards > 1) g.op(p + "attention_all_reduce", "all_reduce", {attn_out}, {attn_out});
    if (layer.post_attn_norm.present()) attn_out = g.norm(p + "post_attn_norm", attn_out, t * hidden);

    const bool parallel = spec.residual == Residual::kParallel;
    if (!parallel) g.op(p + "attention_residual", "add", {x, attn_out}, {x}, t * hidden);
    const int mlp_in = layer.mlp_norm.present() ? g.norm(p + "mlp_norm", x, t * hidden) : (parallel ? attn_in : x);
    int mlp_out = -1;
    if (!layer.experts.empty()) {
      const int router = g.linear(p + "router", mlp_in, layer.router, t);
      mlp_out = g.value(p + "experts_out", t * hidden);
      const ExpertWeights& one = layer.experts.front();
      int64_t expert_bytes = 0;
      for (const ExpertWeights& e : layer.experts)
        expert_bytes += (e.gate.rows() * e.gate.cols() + e.up.rows() * e.up.cols() + e.down.rows() * e.down.cols()) *
                        (e.gate.dtype() == DType::kBF16 ? 2 : 4);
      g.op(p + "experts", "experts", {mlp_in, router}, {mlp_out}, expert_flops(one, t * spec.moe.top_k),
           expert_bytes);
      if (!layer.shared_expert.down.empty()) {
        const ExpertWeights& s = layer.shared_expert;
        const int gate = g.linear(p + "shared_expert.gate_proj", mlp_in, s.gate, t);
        const int up = g.linear(p + "shared_expert.up_proj", mlp_in, s.up, t);
        g.op(p + "shared_expert.act_mul", "act_mul", {gate, up}, {up}, 2 * t * s.up.rows());
        const int shared = g.linear(p + "shared_expert.down_proj", up, s.down, t);
        g.op(p + "shared_expert_add", "add", {mlp_out, shared}, {mlp_out}, t * hidden);
      }
    } else {
      const int up = g.linear(p + "up_proj", mlp_in, layer.up_proj, t);
      if (!layer.gate_proj.empty()) {
        const int gate = g.linear(p + "gate_proj", mlp_in, layer.gate_proj, t);
        g.op(p + "act_mul", "act_mul", {gate, up}, {up}, 2 * t * layer.up_proj.rows());
      } else {
        g.op(p + "act", "act_mul", {up}, {up}, t * layer.up_proj.rows());
      }
      mlp_out = g.linear(p + "down_proj", up, layer.down_proj, t);
    }
    if (shards > 1) g.op(p + "mlp_all_reduce", "all_reduce", {mlp_out}, {mlp_out});
    if (layer.post_mlp_norm.present()) mlp_out = g.norm(p + "post_mlp_norm", mlp_out, t * hidden);
    if (parallel) g.op(p + "attention_residual", "add", {x, attn_out}, {x}, t * hidden);
    g.op(p + "mlp_residual", "add", {x, mlp_out}, {x}, t * hidden);
  }
  // Greedy generation needs the last position's logits only.
  const int last = weights.final_norm.present() ? g.norm("final_norm", x, hidden) : x;
  g.linear("lm_head", last, weights.lm_head, 1);
  return g.take();
}

BufferPlan plan_buffers(const ForwardGraph& graph) {
  const size_t n = graph.values.size();
  BufferPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return graph.values[a].bytes > graph.values[b].bytes; });
  std::vector<size_t> placed;
  for (size_t v : order) {
    const GraphValue& value = graph.values[v];
    plan.total_bytes += value.bytes;
    // The ranges of placed values live at the same time, by offset: the first gap that fits wins.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t other : placed) {
      const GraphValue& o = graph.values[other];
      if (o.first <= value.last && value.first <= o.last)
        busy.push_back({plan.offsets[other], plan.offsets[other] + o.bytes});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + value.bytes <= begin) break;
      offset = std::max(offset, end);
    }
    plan.offsets[v] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + value.bytes);
    placed.push_back(v);
  }
  return plan;
}

Json graph_json(const ForwardGraph& graph, const BufferPlan& plan) {
  Json values = Json::array();
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const GraphValue& v = graph.values[i];
    values.push_back({{"name", v.name}, {"bytes", v.bytes}, {"live", {v.first, v.last}}, {"offset", plan.offsets[i]}});
  }
  Json ops = Json::array();
  for (const GraphOp& op : graph.ops)
    ops.push_back({{"name", op.name},
                   {"kind", op.kind},
                   {"inputs", op.inputs},
                   {"outputs", op.outputs},
                   {"flops", op.flops},
                   {"weight_bytes", op.weight_bytes}});
  return {{"tokens", graph.tokens},
          {"positions", graph.positions},
          {"flops", graph.flops()},
          {"weight_bytes", graph.weight_bytes()},
          {"arena_bytes", plan.arena_bytes},
          {"activation_bytes_without_reuse", plan.total_bytes},
          {"ops", ops},
          {"values", values}};
}

}  // namespace canrun
