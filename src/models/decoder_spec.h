// Everything the shared decoder-only transformer needs to know about one model:
// sizes, and each family quirk as a parameter rather than a code path of its own.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "models/rope.h"
#include "models/vision_tower_spec.h"
#include "tensor/fp8.h"
#include "tensor/packed_int.h"

namespace canrun {

// The widest hidden, latent or LoRA size a config may name: a bound on what a config makes canrun
// allocate.
constexpr int64_t kMaxConfigWidth = int64_t{1} << 17;

// kRms: x * rsqrt(mean(x^2) + eps) * w. kLayerNorm: (x - mean) * rsqrt(var + eps) * w (+ b).
// Gemma's (1 + w) RMSNorm is kRms with unit_offset: the 1 is folded into w once at load.
enum class NormKind { kRms, kLayerNorm };
struct NormSpec {
  NormKind kind = NormKind::kRms;
  bool bias = false;
  bool unit_offset = false;
  float eps = 1e-6f;
};

// Where q/k normalisation applies: over each head (qwen3, gemma3) or over all heads at once (olmo2).
enum class QkNorm { kNone, kPerHead, kWhole };

// A per-head q/k norm's weights: one vector every head shares (qwen3), a row per head in one
// [heads, head_dim] tensor (cohere's use_qk_norm), one tensor per head, "<name>.norms.<h>"
// (stablelm's qk_layernorm), or none at all (llama4's L2 norm: an RMSNorm without weight).
enum class QkNormWeights { kShared, kHeadRows, kHeadList, kNone };

// How a fused q/k/v projection stacks its outputs: [q; k; v] (phi3, gpt2) or, per head,
// [q_h; k_h; v_h] (gpt_neox).
enum class FusedQkv { kNone, kConcat, kPerHead };

// Sequential: x += attn(n1(x)); x += mlp(n2(x)). Parallel: x += attn(n1(x)) + mlp(n2(x)), with
// n2 = n1 when the family has one norm per layer (phi, cohere). PostNorm: x = n1(x + attn(x));
// x = n2(x + mlp(x)) (opt-350m's do_layer_norm_before false).
enum class Residual { kSequential, kParallel, kPostNorm };

// The tensor names of a family (transformers' names in the published checkpoint). An empty
// name means the family has no such tensor. Norm and projection names are prefixes: ".weight"
// and ".bias" are appended. Layer names are relative to "<layers>.<i>.".
struct WeightNames {
  std::string embed = "model.embed_tokens";
  std::string positions;  // learned absolute positions (gpt2, opt)
  std::string token_types;  // token type embeddings added to every token's (bert: type 0, or a pair's second part 1)
  std::string embed_norm;   // a norm of the summed embeddings (bert's embeddings.LayerNorm)
  // Projections between embeddings narrower than the model and the model (spec.embed_dim).
  std::string project_in, project_out;
  std::string final_norm = "model.norm";
  std::string lm_head = "lm_head";
  std::string layers = "model.layers";
  std::string attn_norm = "input_layernorm";
  std::string post_attn_norm;  // applied to the attention output before the residual add (gemma2, olmo2)
  std::string mlp_norm = "post_attention_layernorm";
  std::string post_mlp_norm;
  std::string q = "self_attn.q_proj", k = "self_attn.k_proj", v = "self_attn.v_proj";
  std::string qkv;  // fused projection, used when spec.fused_qkv != kNone
  std::string o = "self_attn.o_proj";
  std::string q_norm = "self_attn.q_norm", k_norm = "self_attn.k_norm";
  std::string gate = "mlp.gate_proj", up = "mlp.up_proj", down = "mlp.down_proj";
  std::string gate_up;  // fused [gate; up] (phi3), used when spec.fused_gate_up
  // Mixture of experts: router, then "<experts>.<e>.<expert_gate|up|down>".
  std::string router = "mlp.gate";
  std::string score_bias = "mlp.gate.e_score_correction_bias";  // MoeSpec::sigmoid_scores
  std::string experts = "mlp.experts";
  std::string expert_gate = "gate_proj", expert_up = "up_proj", expert_down = "down_proj";
  std::string stacked_gate_up = "gate_up_proj", stacked_down = "down_proj";  // MoeSpec::stacked
  std::string shared_expert = "mlp.shared_expert";
  std::string shared_expert_gate = "mlp.shared_expert_gate";
  std::string sinks = "self_attn.sinks";
  // MPNet's relative position bias, [buckets, heads], one for every layer (a base model name).
  std::string relative_attention_bias;
  // Multi-head latent attention (spec.latent_attention); q_proj and o_proj are `q` and `o`.
  std::string q_a = "self_attn.q_a_proj", q_a_norm = "self_attn.q_a_layernorm", q_b = "self_attn.q_b_proj";
  std::string kv_a = "self_attn.kv_a_proj_with_mqa", kv_a_norm = "self_attn.kv_a_layernorm";
  std::string kv_b = "self_attn.kv_b_proj";
  std::string indexer = "self_attn.indexer";  // its wq_b, wk, k_norm and weights_proj
  std::string mamba = "mixer";  // in_proj, conv1d, dt_bias, A_log, D, norm, out_proj
  std::string layer_scalar;      // a [1] tensor multiplying the residual stream after the layer (gemma4)
  // gemma4's router: its input norm's weight and a scale per expert (MoeSpec::router_input_norm).
  std::string router_scale = "router.scale", per_expert_scale = "router.per_expert_scale";
  // spec.experts_beside_mlp: the dense MLP's output norm, the experts' input and output norms.
  std::string post_mlp_alone_norm, experts_norm, post_experts_norm;
  // spec.per_layer_input_dim: the model's per-layer embeddings, projection and its norm; each
  // layer's gate, projection and norm of its input.
  std::string per_layer_embed = "model.embed_tokens_per_layer";
  std::string per_layer_model_projection = "model.per_layer_model_projection";
  std::string per_layer_projection_norm = "model.per_layer_projection_norm";
  std::string per_layer_gate = "per_layer_input_gate", per_layer_projection = "per_layer_projection";
  std::string post_per_layer_norm = "post_per_layer_input_norm";
  // spec.hyper: each layer's mixes before its attention and its MLP, and the head's.
  std::string attn_hc = "hc_attn", ffn_hc = "hc_ffn", hc_head = "model.hc_head";
};

// A routed-experts MLP: softmax over the router logits, top-k, optionally renormalised over
// the k chosen, then the weighted sum of those experts; plus an always-on shared expert
// (optionally scaled by sigmoid of a one-output gate).
struct MoeSpec {
  int64_t num_experts = 0;
  int64_t top_k = 0;
  int64_t expert_ffn = 0;
  bool normalize_top_k = false;
  int64_t shared_ffn = 0;  // 0: no shared expert
  bool shared_expert_gate = false;
  // gpt-oss: the router has a bias and takes the softmax over the k chosen logits; experts
  // are stored as 3-D [E, in, out] tensors with biases (gate and up interleaved), optionally
  // as MXFP4 blocks and scales, and use the clamped SwiGLU (up + 1) * g * sigmoid(alpha * g).
  bool router_bias = false;
  bool softmax_after_top_k = false;
  bool fused_3d_experts = false;
  bool mxfp4 = false;
  bool clamped_swiglu = false;
  float swiglu_alpha = 1.702f;
  float swiglu_limit = 7.0f;
  // deepseek_v2: the chosen weights are multiplied by routed_scale; with groups > 0 the experts
  // form that many equal groups and only the top_k_groups groups whose best expert scores
  // highest stay eligible (the others' probabilities are zeroed before the top-k).
  float routed_scale = 1.0f;
  int64_t groups = 0;
  int64_t top_k_groups = 0;
  // deepseek_v3 (noaux_tc), minimax_m2: sigmoid scores; the router's e_score_correction_bias is
  // added to them for the choice only (groups, if any, ranked by the sum of their two best, then the top-k), the
  // chosen experts are weighted by their unbiased scores, renormalised (+1e-20) when
  // normalize_top_k, then scaled by routed_scale.
  bool sigmoid_scores = false;
  // ernie4_5_moe: softmax scores, the score bias (stored [1, experts], under names.score_bias)
  // added for the choice only, the chosen renormalised by max(sum, normalize_floor).
  bool softmax_score_bias = false;
  float normalize_floor = 0.0f;
  // false: each expert (and the shared expert) is down(act(up(x))), with no gate projection
  // (nemotron_h).
  bool gated_experts = true;
  // The experts as two 3-D tensors, "<experts>.<stacked_gate_up>" and "<experts>.<stacked_down>",
  // gate and up one after the other: kRows (granitemoe) [E, 2 expert_ffn, hidden] and
  // [E, hidden, expert_ffn], its shared expert's gate and up likewise in one
  // "<shared_expert>.<expert_up>" [2 shared_ffn, hidden]; kColumns (llama4) [E, hidden,
  // 2 expert_ffn] and [E, expert_ffn, hidden], applied as x @ W.
  enum class Stacked { kNone, kRows, kColumns } stacked = Stacked::kNone;
  // llama4: the top-k of the router logits, each expert's input x scaled by sigmoid of its logit
  // and its output added unweighted.
  bool sigmoid_scaled_input = false;
  // gemma4: the router reads the residual stream (not the experts' normed input), RMS-normalised
  // times "<router_scale>" / sqrt(hidden); each chosen weight is then times its expert's
  // "<per_expert_scale>".
  bool router_input_norm = false;
  bool per_expert_scale = false;
  // deepseek_v4: scores sqrt(softplus(logit)) instead of sigmoid (with sigmoid_scores' choice and
  // weighting); on the layers hash_layers marks, the k experts are the token's row of the
  // router's "<router>.tid2eid" [vocab, k] table instead of the top-k. Its experts' and shared
  // expert's SwiGLU clamps the gate to at most swiglu_limit and up to [-limit, limit] (limited_swiglu).
  bool sqrt_softplus_scores = false;
  std::vector<bool> hash_layers;
  bool limited_swiglu = false;
};

// Multi-head latent attention (deepseek_v2). q comes from q_proj, or through the low rank
// q_a_proj -> RMSNorm -> q_b_proj. One latent per position, kv_a_proj_with_mqa's first
// kv_lora_rank outputs, is RMS-normalised and expanded by kv_b_proj into each head's
// [k_nope; v]; its last rope_dim outputs are one rotary key part shared by all heads. A head's
// query and key are [nope; rope] (spec.head_dim = nope_dim + rope_dim, the rope part rotated in
// interleaved pairs, or in halves when spec.rope_interleaved is false), its value has value_dim.
struct LatentAttentionSpec {
  int64_t q_lora_rank = 0;  // 0: q_proj
  int64_t kv_lora_rank = 0;
  int64_t nope_dim = 0;
  int64_t rope_dim = 0;
  int64_t value_dim = 0;
  bool down_bias = false;  // biases on q_a_proj and kv_a_proj_with_mqa (o_proj's is spec.o_bias)
  NormSpec latent_norm;    // q_a_layernorm and kv_a_layernorm
  // deepseek_v32's sparse attention when index_topk > 0: an indexer (index_heads queries of
  // index_head_dim from the normalised q latent, one LayerNorm'd key per position, rope in
  // halves on their first rope_dim dims) scores the positions a query sees, and the query
  // attends only to the index_topk best of them (all of them while there are no more).
  int64_t index_topk = 0;
  int64_t index_heads = 0;
  int64_t index_head_dim = 0;
  bool index_rope_pairs = false;  // glm_moe_dsa's indexer rotates its rope part in pairs
  // Per layer, true: no indexer of its own, the choice of the last layer before it that has one
  // (glm_moe_dsa's "shared" indexer_types); empty: every layer has its own.
  std::vector<bool> shared_index;
};

// deepseek_v4's attention (mixer kind "compressed_attention"): one key head that is also the
// value, q through q_a_proj -> RMSNorm -> q_b_proj -> an RMSNorm without weight per head, the last
// rope_dim dims of q and k rotated in pairs (the output's rotated back), a learned sink per head,
// the keys of the last `window` positions, and on compressed layers (rate > 0) one more key per
// closed window of `rate` positions: the softmax(gate + position_bias)-weighted sum of the
// window's kv_proj rows, RMSNorm'd and rotated at the window's first position. With an indexer
// (compressed sparse attention) each compressed key covers its window's second halves and the
// previous window's first halves, and a query sees only the index_topk of them its indexer
// scores best. The heads' context goes through o_groups block-diagonal projections to
// o_lora_rank each, then o_b_proj.
struct CompressedAttentionSpec {
  int64_t q_lora_rank = 0;
  int64_t rope_dim = 0;
  int64_t window = 0;
  int64_t o_groups = 1, o_lora_rank = 0;
  std::vector<int64_t> rates;  // per layer; 0: the window alone
  std::vector<bool> indexed;   // per layer: compressed sparse attention
  int64_t index_heads = 0, index_head_dim = 0, index_topk = 0;
  RopeSpec compress_rope;  // compressed layers and their compressed keys; spec.rope otherwise
};

// deepseek_v4's manifold-constrained hyper-connections (streams > 0): the residual stream is
// `streams` copies of hidden per token. Before each block, learned mixes of the RMS-normalised
// streams give pre (how the streams sum into the block's input), post (how its output spreads
// back) and comb (a doubly stochastic mix of the streams, sinkhorn_iters Sinkhorn-Knopp steps);
// after the last layer, the head's pre sums them into one.
struct HyperConnectionSpec {
  int64_t streams = 0;
  int64_t sinkhorn_iters = 20;
  float eps = 1e-6f;
};

// A short gated convolution mixer (lfm2): in_proj to B, C and x (hidden each); B*x through a
// depthwise causal convolution of `kernel` taps over the positions; C times that; out_proj.
struct ShortConvSpec {
  int64_t kernel = 3;
  bool bias = false;  // on in_proj, the convolution and out_proj
};

// A Gated DeltaNet mixer (qwen3_5's linear attention): in_proj_qkv through a depthwise causal
// convolution of `conv_kernel` taps and SiLU gives q, k (key_heads x key_dim, L2-normalised; q
// also times key_dim^-0.5) and v (value_heads x value_dim; each key head serves value_heads /
// key_heads of them); per value head, beta = sigmoid(in_proj_b x) and the decay
// g = -exp(A_log) softplus(in_proj_a x + dt_bias); the state S [key_dim, value_dim] per value head
// becomes S e^g + k (beta (v - S^T k))^T and the output is S^T q, RMS-normalised (weight, eps),
// times silu(in_proj_z x), then out_proj.
struct DeltaNetSpec {
  int64_t key_heads = 0, value_heads = 0;
  int64_t key_dim = 0, value_dim = 0;
  int64_t conv_kernel = 4;
  float norm_eps = 1e-6f;
  // qwen3_next: one in_proj_qkvz with [q; k; v; z] per key head (its group of value heads) and
  // one in_proj_ba with [b; a] per key head, instead of qwen3_5's in_proj_qkv, _z, _b and _a.
  bool grouped_projections = false;
};

// A Mamba-2 mixer (nemotron_h's "M" layers): in_proj gives z [heads x head_dim], the conv input
// [x (heads x head_dim); B; C (groups x state_size each)] and dt [heads]; the conv input goes
// through a depthwise causal convolution of `conv_kernel` taps (bias when conv_bias) and SiLU.
// Per head, dt' = softplus(dt + dt_bias) (at least dt_min in a prefill, as transformers' chunked
// scan clamps and its one-token step does not), the state h [head_dim, state_size] becomes
// h e^(dt' A) + dt' x B^T with A = -exp(A_log), and the output is h C + D x, B and C shared by
// the heads of a group. Then y * silu(z), an RMSNorm over each group's heads (norm_eps), out_proj.
struct MambaSpec {
  int64_t heads = 0, head_dim = 0;
  int64_t groups = 1, state_size = 0;
  int64_t conv_kernel = 4;
  bool conv_bias = true;
  bool proj_bias = false;  // on in_proj and out_proj
  float dt_min = 0.0f;     // time_step_limit, applied where transformers' chunked scan applies it
  float dt_max = std::numeric_limits<float>::infinity();
  float norm_eps = 1e-5f;
  // The RMSNorm of each group after the scan: of y * silu(z) (nemotron_h, granitemoehybrid), or
  // with norm_before_gate of y, then times silu(z). Without gated_norm (falcon_h1's
  // mamba_rms_norm false): y * silu(z) alone.
  bool gated_norm = true;
  bool norm_before_gate = false;
  // falcon_h1's multipliers: in_proj reads its input times in_scale, its outputs z, x, B, C and
  // dt are each times theirs (ssm_multipliers), and the block's output is times out_scale.
  float in_scale = 1.0f;
  std::array<float, 5> zxbcdt_scales = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  float out_scale = 1.0f;
};

// Llama 4's attention temperature: the query at position p times
// 1 + scale * log(1 + floor((p + offset) / floor)), on every layer or only on those without rope
// (llama4: offset 1, layers without rope; ministral3: offset 0, every layer). scale 0: none.
struct QueryTemperature {
  float scale = 0;
  int64_t floor = 1;
  int64_t offset = 0;
  bool layers_without_rope_only = false;
};

// What a forward pass gives: the last position's logits (a generating model), or the hidden
// state of every token after the last layer (an encoder, for embeddings and classification).
enum class ModelOutput { kLogits, kHiddenStates };

struct DecoderSpec {
  std::string model_type;
  ModelOutput output = ModelOutput::kLogits;
  // false: every token attends to every token of its sequence (an encoder's bidirectional attention).
  bool causal = true;
  int64_t type_vocab_size = 0;  // rows of names.token_types
  // The prefix a task head's checkpoint puts before the base model's names ("bert." in
  // BertForSequenceClassification's), followed when the bare names are not stored; then the
  // others the same head is saved under (GTE's "gte." as transformers saves it, beside the
  // Hub's "new."). Loading sets base_model_prefix to the one stored.
  std::string base_model_prefix;
  std::vector<std::string> other_base_model_prefixes;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // dense MLP width
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t max_positions = 0;
  float norm_eps = 1e-6f;  // kept for callers that only know RMSNorm; equals norm.eps
  NormSpec norm;           // every norm of the model, except q/k norms
  NormSpec qk_norm_spec;   // the q/k norms
  RopeSpec rope;           // positions of full-attention layers (all layers unless local_rope is set)
  bool use_local_rope = false;
  RopeSpec local_rope;          // sliding-window layers (gemma3)
  std::vector<bool> rope_layers;  // per layer: false = no rotary (smollm3); empty = all rotate
  bool rotary = true;            // false: no rotary anywhere (learned positions)
  bool rope_interleaved = false;  // rotate pairs (x0,x1),(x2,x3).. instead of halves (cohere)
  // phi3: when generation first passes the longrope pretraining length, transformers drops the
  // KV cache and recomputes every position with the long factors.
  bool longrope_recompute = false;
  Activation activation = Activation::kSilu;
  bool gated_mlp = true;  // act(gate) * up; otherwise act(up) with `up` the first projection
  bool fused_gate_up = false;
  bool fused_up_first = false;  // the fused projection stacks [up; gate] (gte's up_gate_proj), not [gate; up]
  FusedQkv fused_qkv = FusedQkv::kNone;
  bool conv1d = false;  // weights stored [in, out] (gpt2's Conv1D)
  bool tie_embeddings = false;
  bool qkv_bias = false;   // biases on the q, k and v projections
  bool o_bias = false;     // bias on the attention output projection
  bool mlp_bias = false;   // biases on gate, up and down projections
  bool down_bias = false;  // a bias on the down projection alone (gte's fused up_gate_proj has none)
  bool lm_head_bias = false;
  bool qk_norm = false;    // kept for callers; true when qk_norm_kind != kNone
  QkNorm qk_norm_kind = QkNorm::kNone;
  QkNormWeights qk_norm_weights = QkNormWeights::kShared;  // with kPerHead
  // The q/k norms act on the rotated heads (hunyuan_v1_dense); before the rotation otherwise.
  // Only a norm without weights commutes with the rotation.
  bool qk_norm_after_rope = false;
  Residual residual = Residual::kSequential;
  int64_t position_offset = 0;  // learned positions are read at position + offset (opt: 2)
  // 0: hidden_size; else the token embeddings' (and the tied head's) width, projected in to
  // hidden_size before the positions are added and out again after the final norm (opt's
  // word_embed_proj_dim).
  int64_t embed_dim = 0;
  // quantization_config fp8: the matrices stored as F8_E4M3 come with "<name>_scale_inv" per block.
  Fp8Block fp8;
  // quantization_config compressed-tensors: the matrices stored as "<name>.weight_packed" come
  // with "<name>.weight_scale" per row and group of inputs.
  PackedIntScheme packed_int;
  float attention_scale = 0;    // 0: 1/sqrt(head_dim)
  float attn_softcap = 0;       // 0: none; else scores = cap * tanh(scores / cap)
  bool attention_sinks = false;  // gpt-oss: one learned logit per head joins each softmax
  // MPNet: every layer's scores add names.relative_attention_bias's value of the bucket of the
  // key's position relative to the query's (T5's bidirectional buckets up to
  // relative_max_distance); 0: no such bias.
  int64_t relative_buckets = 0;
  int64_t relative_max_distance = 128;
  std::vector<bool> sink_layers;  // per layer (empty: all) whether attention_sinks applies
  // Per layer (empty: num_kv_heads on every layer): mimo_v2_flash's sliding layers have twice
  // the key/value heads of its full ones.
  std::vector<int64_t> layer_kv_heads;
  // Per layer (empty: head_dim on every layer): gemma4's full-attention layers have wider heads.
  std::vector<int64_t> layer_head_dims;
  // Per layer (empty: none): no v_proj, the values are the keys as projected, before k's norm and
  // rotation (gemma4's attention_k_eq_v on its full-attention layers).
  std::vector<bool> keys_as_values;
  bool value_norm = false;  // each value head RMS-normalised without weight (gemma4), eps of qk_norm_spec
  // Per layer (empty: none): -1, or the earlier layer whose cached keys and values this one
  // attends to, with no k/v projections of its own (gemma4's num_kv_shared_layers).
  std::vector<int64_t> kv_source_layers;
  // Per layer (empty: intermediate_size everywhere): the dense MLP's width (gemma4's double-wide
  // MLP on the layers that share keys and values).
  std::vector<int64_t> layer_ffn;
  // gemma4's per-layer inputs (0: none). Per token, a [layers, dim] input: (RMSNorm over each dim
  // of per_layer_model_projection(x) / sqrt(hidden) + embed_tokens_per_layer(token) * sqrt(dim))
  // / sqrt(2), x the scaled embeddings. After its MLP, layer i adds
  // norm(projection(act(gate(x)) * input_i)) to the residual stream.
  int64_t per_layer_input_dim = 0;
  int64_t per_layer_vocab = 0;
  int64_t value_dim = 0;     // each head's value width where it is not head_dim (mimo_v2_flash); 0: head_dim
  float value_scale = 1.0f;  // values times this as they are projected (mimo_v2_flash)
  // falcon_h1's attention beside Mamba-2: it reads the normed input times attention_in_scale,
  // and its output is times attention_out_scale.
  float attention_in_scale = 1.0f, attention_out_scale = 1.0f;
  // falcon_h1's dense MLP: down(act(gate(x) * mlp_gate_scale) * up(x)) * mlp_down_scale.
  float mlp_gate_scale = 1.0f, mlp_down_scale = 1.0f;
  bool attention_output_gate = false;  // qwen3_5: context * sigmoid(gate), gate from q_proj beside q
  bool latent_attention = false;  // deepseek_v2: attention as `mla` describes
  LatentAttentionSpec mla;
  CompressedAttentionSpec compressed;  // the layers whose mixer kind is "compressed_attention"
  HyperConnectionSpec hyper;
  float final_softcap = 0;
  float embedding_scale = 1;    // gemma: sqrt(hidden); granite: embedding_multiplier
  float residual_scale = 1;     // granite: residual_multiplier on each block's output
  float logits_scale = 1;       // multiplies the logits (granite: 1 / logits_scaling; cohere: logit_scale)
  std::vector<int64_t> sliding_window;  // per layer; 0 means full causal attention
  // Per layer (empty: none): a query sees only the positions of its own chunk of this many
  // (llama4's chunked_attention layers).
  std::vector<int64_t> attention_chunk;
  // Per layer (empty: all): whether the q/k norm applies (llama4: only on the layers with rope).
  std::vector<bool> qk_norm_layers;
  // Per layer (empty: all): whether names.attn_norm applies; without it the attention reads the
  // residual stream itself (modernbert's first layer, whose attn_norm is an Identity).
  std::vector<bool> attn_norm_layers;
  QueryTemperature query_temperature;
  MoeSpec moe;
  ShortConvSpec conv;  // the layers whose mixer kind is "short_conv"
  DeltaNetSpec deltanet;  // the layers whose mixer kind is "gated_deltanet"
  MambaSpec mamba;        // the layers whose mixer kind is "mamba2"
  std::vector<bool> moe_layers;  // per layer: true = routed experts instead of the dense MLP
  // gemma4's 26B-A4B: every layer has routed experts beside its dense MLP, both reading the
  // residual stream through norms of their own; their normed outputs are summed, then the
  // layer's post-MLP norm applies.
  bool experts_beside_mlp = false;
  // Per layer, the block kinds of its token mixer and feed-forward block (blocks/block_kind.h);
  // empty: attention or latent_attention, and dense_mlp or routed_experts as the flags say.
  // "none": the layer has no such block, nor its norm (nemotron_h's layers hold one block each).
  std::vector<std::string> mixer_kinds, ffn_kinds;
  WeightNames names;
  // Image-text-to-text checkpoints (qwen3_vl, qwen3_5): the image tokens' id, whose embeddings
  // the vision tower's features replace (-1 for text models), and the tower.
  int32_t image_token_id = -1;
  std::optional<VisionTowerSpec> vision;
};

// How many of the first layers add the vision tower's earlier features (DeepStack).
inline int64_t deepstack_layers(const DecoderSpec& spec) {
  return spec.vision ? static_cast<int64_t>(spec.vision->deepstack_indexes.size()) : 0;
}

inline bool layer_uses_rope(const DecoderSpec& spec, int64_t layer) {
  if (!spec.rotary) return false;
  return spec.rope_layers.empty() || spec.rope_layers[static_cast<size_t>(layer)];
}

inline int64_t layer_head_dim(const DecoderSpec& spec, int64_t layer) {
  return spec.layer_head_dims.empty() ? spec.head_dim : spec.layer_head_dims[static_cast<size_t>(layer)];
}

// The width of each head's value on layer `layer` (and of the KV cache's value rows).
inline int64_t value_head_dim(const DecoderSpec& spec, int64_t layer) {
  if (spec.latent_attention) return spec.mla.value_dim;
  return spec.value_dim > 0 ? spec.value_dim : layer_head_dim(spec, layer);
}

inline int64_t layer_kv_source(const DecoderSpec& spec, int64_t layer) {
  return spec.kv_source_layers.empty() ? -1 : spec.kv_source_layers[static_cast<size_t>(layer)];
}

inline int64_t layer_ffn_width(const DecoderSpec& spec, int64_t layer) {
  return spec.layer_ffn.empty() ? spec.intermediate_size : spec.layer_ffn[static_cast<size_t>(layer)];
}

inline bool layer_keys_as_values(const DecoderSpec& spec, int64_t layer) {
  return !spec.keys_as_values.empty() && spec.keys_as_values[static_cast<size_t>(layer)];
}

inline int64_t layer_kv_heads(const DecoderSpec& spec, int64_t layer) {
  return spec.layer_kv_heads.empty() ? spec.num_kv_heads : spec.layer_kv_heads[static_cast<size_t>(layer)];
}

// The name of layer `layer`'s attention norm, empty where it has none.
inline std::string layer_attn_norm(const DecoderSpec& spec, int64_t layer) {
  const bool applies = spec.attn_norm_layers.empty() || spec.attn_norm_layers[static_cast<size_t>(layer)];
  return applies ? spec.names.attn_norm : std::string();
}

inline bool layer_has_sinks(const DecoderSpec& spec, int64_t layer) {
  return spec.attention_sinks && (spec.sink_layers.empty() || spec.sink_layers[static_cast<size_t>(layer)]);
}

inline bool layer_is_moe(const DecoderSpec& spec, int64_t layer) {
  return !spec.moe_layers.empty() && spec.moe_layers[static_cast<size_t>(layer)];
}

inline std::string mixer_kind(const DecoderSpec& spec, int64_t layer) {
  if (!spec.mixer_kinds.empty()) return spec.mixer_kinds[static_cast<size_t>(layer)];
  return spec.latent_attention ? "latent_attention" : "attention";
}

inline std::string ffn_kind(const DecoderSpec& spec, int64_t layer) {
  if (!spec.ffn_kinds.empty()) return spec.ffn_kinds[static_cast<size_t>(layer)];
  return layer_is_moe(spec, layer) ? "routed_experts" : "dense_mlp";
}

}  // namespace canrun
