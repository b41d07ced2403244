"""Makes the tiny random checkpoints in tests/fixtures/models and their transformers goldens.

Each fixture is a Hub-style model folder written by transformers' own save_pretrained, with
a tokenizer from tools/tokenizer_styles.py. Its golden, tests/goldens/models/<name>.json,
records for a few prompts the prompt ids, the 32-token greedy generation of
`model.generate` and the float32 logits of the last prompt position. canrun's parity tests
check its loader, tokenizer and ref backend against these files, so CI needs no torch.

Goldens are computed in float32 on the CPU with eager attention; bf16/f16 fixtures are
loaded widened to float32, as canrun's ref backend does. Each generation is also checked
against sdpa attention and against a cache-free greedy loop, and every step's top-1/top-2
logit gap is recorded: a fixture whose gap falls below MIN_TOP2_GAP is rejected, because a
near tie would let harmless rounding differences flip a token. Change its seed then.

Run with the tools venv (tools/requirements-tools.txt):
    python tools/make_fixtures.py            # all fixtures
    python tools/make_fixtures.py --only qwen2 --only mistral_sliding
"""
import argparse
import contextlib
import copy
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import compressed_tensors
import gptqmodel
import numpy as np
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig
from transformers.models.auto.tokenization_auto import MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS

from compressed_tensors_checkpoint import pack_compressed
from fp8_checkpoint import pack_fp8
from gptq_checkpoint import pack_gptq
from tokenizer_styles import build_tokenizer, special_token_ids

ROOT = Path(__file__).resolve().parent.parent
FIXTURES_DIR = ROOT / "tests" / "fixtures" / "models"
GOLDENS_DIR = ROOT / "tests" / "goldens" / "models"
MAX_NEW_TOKENS = 32
# Reordered float32 sums move these logits (magnitude ~10) by ~1e-5; a 5e-3 gap leaves a wide
# margin before a different but correct implementation could pick another token.
MIN_TOP2_GAP = 5e-3
# GPTQ fixtures: the logits of an exact and an f16-rounded dequantisation differed by up to 2.5e-2.
GPTQ_LOGIT_TOLERANCE = 5e-2
GPTQ_MIN_TOP2_GAP = 2e-2
# A sparse attention indexer keeps each query's top-k keys by its scores (magnitude ~1); a gap
# this wide between the k-th and the next keeps reordered sums from changing the choice.
MIN_INDEX_GAP = 1e-4
# Random weights of this spread give peaked, input-dependent next-token distributions; the
# default init (std 0.02, norms at 1, biases at 0) gives nearly flat logits and near ties.
WEIGHT_STD = 0.3
EMBED_STD = 1.0
BIAS_STD = 0.3
NORM_RANGE = (0.5, 1.5)

# The one-token case is the bare BOS where the tokenizer adds one, else a one-token word.
# The last prompt is longer than the sliding windows (6) so that prefill already slides.
PROMPTS = (
    None,
    "Hello world",
    "Once upon a time, in a small village by the sea,",
    "In 2024, the model had 135 million parameters; by 2025 it had 1.7 billion.\n"
    "Café, naïve, Zürich: the quick brown fox jumps over the lazy dog.",
)

TOKENIZER_NAMES = {
    "sentencepiece": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"},
    "gpt2": {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"},
}

TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, max_position_embeddings=128)
LLAMA = dict(TINY, model_type="llama", rms_norm_eps=1e-5,
             rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
MISTRAL = dict(TINY, model_type="mistral", rms_norm_eps=1e-6,
               rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
QWEN2 = dict(TINY, model_type="qwen2", rms_norm_eps=1e-6,
             rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
QWEN3 = dict(TINY, model_type="qwen3", head_dim=24, rms_norm_eps=1e-6,
             rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
DEFAULT_ROPE = {"rope_type": "default", "rope_theta": 10000.0}
PHI3 = dict(TINY, model_type="phi3", rms_norm_eps=1e-5, rope_parameters=DEFAULT_ROPE, pad_token_id=None)
MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
QWEN3_MOE = dict(TINY, **MOE, model_type="qwen3_moe", rms_norm_eps=1e-6,
                 rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
QWEN2_MOE = dict(TINY, **MOE, model_type="qwen2_moe", rms_norm_eps=1e-6, shared_expert_intermediate_size=48,
                 rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
MIXTRAL = dict(TINY, model_type="mixtral", intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
               rms_norm_eps=1e-5, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
OLMOE = dict(TINY, model_type="olmoe", intermediate_size=32, num_experts=4, num_experts_per_tok=2,
             rms_norm_eps=1e-5, rope_parameters=DEFAULT_ROPE)
GEMMA = dict(TINY, model_type="gemma", rms_norm_eps=1e-6, rope_parameters=DEFAULT_ROPE)
GEMMA2 = dict(TINY, model_type="gemma2", rms_norm_eps=1e-6, query_pre_attn_scalar=24, sliding_window=6,
              attn_logit_softcapping=10.0, final_logit_softcapping=30.0, rope_parameters=DEFAULT_ROPE)
GEMMA3 = dict(TINY, model_type="gemma3_text", rms_norm_eps=1e-6, query_pre_attn_scalar=24, sliding_window=6,
              layer_types=["sliding_attention", "full_attention"],
              rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000000.0},
                               "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
# Gemma 4: full layers (1, 3) with heads of 32 (4 of 16 pairs rotate, proportional rope), one kv
# head whose keys serve as values; sliding layers (window 6) with heads of 16 and 2 kv heads.
GEMMA4_TEXT = dict(TINY, model_type="gemma4_text", num_hidden_layers=4, rms_norm_eps=1e-6, sliding_window=6,
                   layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                   global_head_dim=32, num_global_key_value_heads=1, attention_k_eq_v=True,
                   hidden_size_per_layer_input=0, final_logit_softcapping=30.0,
                   rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                    "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                       "rope_theta": 1000000.0}})
GPT2 = dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=4, n_inner=128, max_position_embeddings=128,
            layer_norm_epsilon=1e-5)
GPT_NEOX = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=128, model_type="gpt_neox", layer_norm_eps=1e-5,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25})
OPT = dict(model_type="opt", hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4,
           max_position_embeddings=128, word_embed_proj_dim=64)
PHI = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
           num_key_value_heads=4, max_position_embeddings=128, model_type="phi", layer_norm_eps=1e-5,
           rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5})
GRANITE = dict(TINY, model_type="granite", rms_norm_eps=1e-6, rope_parameters=DEFAULT_ROPE,
               embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.125,
               logits_scaling=1.5)
OLMO2 = dict(TINY, model_type="olmo2", rms_norm_eps=1e-6, rope_parameters=DEFAULT_ROPE)
SMOLLM3 = dict(TINY, model_type="smollm3", rms_norm_eps=1e-6, rope_parameters=DEFAULT_ROPE, pad_token_id=None,
               no_rope_layer_interval=2)
STARCODER2 = dict(TINY, model_type="starcoder2", norm_epsilon=1e-5, sliding_window=6,
                  rope_parameters=DEFAULT_ROPE)
STABLELM = dict(TINY, model_type="stablelm", layer_norm_eps=1e-5, num_key_value_heads=4, use_qkv_bias=True,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25})
GPT_OSS = dict(TINY, model_type="gpt_oss", intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
               rms_norm_eps=1e-5, sliding_window=6)
# Multi-head latent attention: q/k heads of 16 + 8 (rope), values of 12; num_key_value_heads
# must equal the heads (transformers expands keys and values for every head).
DEEPSEEK_V2 = dict(TINY, model_type="deepseek_v2", num_hidden_layers=3, num_key_value_heads=4, rms_norm_eps=1e-6,
                   kv_lora_rank=24, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                   n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, first_k_dense_replace=1)
# DeepSeek-V3's router: 8 experts in 4 groups, the best 2 groups by their two best biased
# scores, top-3 of those; shared expert; layer 0 dense.
DEEPSEEK_V3 = dict(DEEPSEEK_V2, model_type="deepseek_v3", n_routed_experts=8, num_experts_per_tok=3,
                   n_group=4, topk_group=2, n_shared_experts=1, routed_scaling_factor=2.5)
del DEEPSEEK_V3["head_dim"]  # the config class sets it to qk_rope_head_dim
GLM4_MOE_LITE = dict(DEEPSEEK_V3, model_type="glm4_moe_lite", rms_norm_eps=1e-5, routed_scaling_factor=1.8)
del GLM4_MOE_LITE["first_k_dense_replace"]
# DeepSeek-V4: 4 query heads of 32 over one shared key=value head, rope on the last 8 dims; layer
# 0 slides over 8 positions alone, 1 and 3 add windows of 4 compressed in overlapping pairs with
# an indexer keeping the best 3, 2 adds windows of 8; 4 hyper-connection streams; layers 0-1
# route by token id (tid2eid), 2-3 by sqrtsoftplus scores. The indexer has 8 heads: with 4, its
# ReLU scores are exactly 0 for several keys often enough that every seed tried tied at the cut.
# swiglu_limit 4 clamps about 10% of the up and 5% of the gate activations. Not built on TINY:
# intermediate_size is an alias of moe_intermediate_size here.
DEEPSEEK_V4 = dict(model_type="deepseek_v4", hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
                   num_key_value_heads=1, head_dim=32, q_lora_rank=32, partial_rotary_factor=0.25, o_groups=2,
                   o_lora_rank=16, moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2,
                   n_shared_experts=1, scoring_func="sqrtsoftplus", norm_topk_prob=True, routed_scaling_factor=1.5,
                   swiglu_limit=4.0, sliding_window=8,
                   layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                                "compressed_sparse_attention"],
                   compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 8},
                   mlp_layer_types=["hash_moe", "hash_moe", "moe", "moe"], index_n_heads=8, index_head_dim=16,
                   index_topk=3, hc_mult=4, hc_sinkhorn_iters=20, hc_eps=1e-6, rms_norm_eps=1e-6, rope_theta=10000.0,
                   compress_rope_theta=160000.0, max_position_embeddings=128, tie_word_embeddings=False)
# Nemotron-H: Mamba-2 at 0 and 2 (8 heads of 8 in 2 groups, 16 states, 4-tap convolution,
# prefill chunks of 8), attention at 3, a relu2 MLP at 4, sigmoid-routed relu2 experts at 1 and 5
# (8 in 2 groups, the best group's top-2, scaled by 2.5) with a shared expert. time_step_min
# 0.01 makes the prefill's clamp of dt bind at some positions (102 of the 2048 step sizes its
# prompts' prefills compute); a larger floor changes the tokens transformers' own decode steps,
# which do not clamp, pick against its cache-free loop.
NEMOTRON_H = dict(model_type="nemotron_h", hidden_size=64, intermediate_size=96, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, max_position_embeddings=128, layer_norm_epsilon=1e-5,
                  hybrid_override_pattern="MEM*-E", mamba_num_heads=8, mamba_head_dim=8, ssm_state_size=16,
                  n_groups=2, conv_kernel=4, chunk_size=8, time_step_min=0.01, n_routed_experts=8,
                  num_experts_per_tok=2, moe_intermediate_size=32, moe_shared_expert_intermediate_size=48,
                  n_group=2, topk_group=1, routed_scaling_factor=2.5, norm_topk_prob=True)
# Granite 4.0-H: Mamba-2 at 0, 2, 3 (8 heads of 16 = 2 x hidden, 2 groups, 16 states, prefill
# chunks of 8), rope attention at 1; 4 experts top-2 (softmax over the two) plus a shared SwiGLU
# on every layer; Granite's multipliers.
GRANITEMOEHYBRID = dict(TINY, model_type="granitemoehybrid", num_hidden_layers=4, rms_norm_eps=1e-6,
                        layer_types=["mamba", "attention", "mamba", "mamba"], position_embedding_type="rope",
                        rope_parameters=DEFAULT_ROPE, mamba_n_heads=8, mamba_d_head=16, mamba_n_groups=2,
                        mamba_d_state=16, mamba_d_conv=4, mamba_chunk_size=8, intermediate_size=32,
                        num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=48,
                        embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.125,
                        logits_scaling=1.5)
# Llama 4 text: layers 1 and 3 without rope (temperature tuning, floor 4), 0 and 2 rotated in
# pairs with L2 q/k norms and attending within chunks of 6; routed experts on 1 and 3 (4 of width
# 32, top-1, input scaled by sigmoid) plus a shared expert, a SwiGLU of 96 on 0 and 2.
LLAMA4_TEXT = dict(TINY, model_type="llama4_text", num_hidden_layers=4, rms_norm_eps=1e-5, intermediate_size=32,
                   intermediate_size_mlp=96, num_local_experts=4, num_experts_per_tok=1, interleave_moe_layer_step=2,
                   no_rope_layer_interval=2, attention_chunk_size=6, floor_scale=4, attn_scale=0.1,
                   rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
SEED_OSS = dict(TINY, model_type="seed_oss", rms_norm_eps=1e-6, attention_bias=True, attention_out_bias=False,
                mlp_bias=True, rope_parameters=DEFAULT_ROPE)
# OLMo 3: layers 0-2 slide over 6 positions with the default rope, layer 3 is global with yarn.
OLMO3 = dict(TINY, model_type="olmo3", num_hidden_layers=4, rms_norm_eps=1e-6, sliding_window=6,
             rope_parameters={"full_attention": {"rope_type": "yarn", "factor": 2.0, "rope_theta": 500000.0,
                                                 "original_max_position_embeddings": 64},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
ERNIE4_5 = dict(TINY, model_type="ernie4_5", rms_norm_eps=1e-5, use_bias=True,
                rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
# ERNIE 4.5 MoE: layer 0 dense, layer 1 four experts (top-2, softmax chosen with a score bias)
# beside one shared expert.
ERNIE4_5_MOE = dict(TINY, model_type="ernie4_5_moe", rms_norm_eps=1e-5, moe_num_experts=4, moe_k=2,
                    moe_intermediate_size=32, moe_num_shared_experts=1, moe_layer_start_index=1,
                    rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
EXAONE4 = dict(TINY, model_type="exaone4", num_hidden_layers=4, rms_norm_eps=1e-5, sliding_window=6,
               sliding_window_pattern=4, rope_parameters=DEFAULT_ROPE)
# Hunyuan dense: q/k norms after the rotation, and the checkpoints' "dynamic" rope with an alpha
# (a fixed NTK stretch of the base).
HUNYUAN_V1_DENSE = dict(TINY, model_type="hunyuan_v1_dense", rms_norm_eps=1e-5,
                        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 1.0,
                                         "alpha": 50.0})
# Apertus: xIELU's learned scalars per layer, llama3 rope.
APERTUS = dict(TINY, model_type="apertus", rms_norm_eps=1e-5, hidden_act="xielu",
               rope_parameters={"rope_type": "llama3", "rope_theta": 12000000.0, "factor": 8.0,
                                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 32})
# MiMo-V2-Flash: layers 0 and 3 full, 1 and 2 sliding over 5 positions with twice the kv heads
# and sinks; values of 8 against keys of 16, scaled by 0.707; a rope per kind on half of each
# head; layer 0 dense, 1-3 four sigmoid-routed experts (top-2 of the best 1 of 2 groups).
MIMO_V2_FLASH = dict(TINY, model_type="mimo_v2_flash", num_hidden_layers=4, rms_norm_eps=1e-5, v_head_dim=8,
                     sliding_window=5, attention_value_scale=0.707,
                     layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
                     n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, n_group=2, topk_group=1,
                     rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 5000000.0,
                                                         "partial_rotary_factor": 0.5},
                                      "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0,
                                                            "partial_rotary_factor": 0.5}})
# GLM-4.5 (glm4_moe): q/k/v biases, per-head q/k norms, rope on half of each head; layer 0 dense,
# layer 1 four sigmoid-routed experts (top-2 in the best of 2 groups, scaled 1.5) and a shared one.
GLM4_MOE = dict(TINY, model_type="glm4_moe", rms_norm_eps=1e-5, attention_bias=True, use_qk_norm=True,
                n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, n_shared_experts=1, n_group=2,
                topk_group=1, first_k_dense_replace=1, routed_scaling_factor=1.5,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "partial_rotary_factor": 0.5})
# Ministral 3: yarn (factor 4 over 32 positions) and the attention temperature with a floor of 8
# positions, so that the prompts reach its first two steps.
MINISTRAL3 = dict(TINY, model_type="ministral3", rms_norm_eps=1e-5,
                  rope_parameters={"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                                   "original_max_position_embeddings": 8, "max_position_embeddings": 128,
                                   "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0,
                                   "llama_4_scaling_beta": 0.1})
MINIMAX_M2 = dict(TINY, model_type="minimax_m2", intermediate_size=32, num_local_experts=8, num_experts_per_tok=2,
                  rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                      "partial_rotary_factor": 0.5})
LFM2 = dict(TINY, model_type="lfm2", num_hidden_layers=4, norm_eps=1e-5, conv_L_cache=3, block_multiple_of=16,
            layer_types=["conv", "full_attention", "conv", "full_attention"],
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
del LFM2["head_dim"]  # hidden_size / num_attention_heads, as Lfm2Attention reads it
QWEN3_5_TEXT = dict(TINY, model_type="qwen3_5_text", num_hidden_layers=4, rms_norm_eps=1e-6,
                    linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                    linear_value_head_dim=12, linear_conv_kernel_dim=4,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25})
QWEN3_5_MOE_TEXT = dict(QWEN3_5_TEXT, model_type="qwen3_5_moe_text", num_experts=4, num_experts_per_tok=2,
                        moe_intermediate_size=32, shared_expert_intermediate_size=48,
                        layer_types=["linear_attention", "full_attention", "linear_attention", "full_attention"])
QWEN3_NEXT = dict(QWEN3_5_TEXT, model_type="qwen3_next", num_experts=4, num_experts_per_tok=2,
                  moe_intermediate_size=32, shared_expert_intermediate_size=48, norm_topk_prob=True,
                  mlp_only_layers=[2])
# Falcon-H1: Mamba-2 (6 heads of 16 = mamba_d_ssm 96, not 2 x hidden; 2 groups, 16 states, prefill
# chunks of 8) beside attention in each of 3 layers, then a SwiGLU; every μP multiplier off 1.
FALCON_H1 = dict(TINY, model_type="falcon_h1", num_hidden_layers=3, intermediate_size=48, rms_norm_eps=1e-5,
                 rope_parameters=DEFAULT_ROPE, mamba_d_ssm=96, mamba_n_heads=6, mamba_d_head=16, mamba_n_groups=2,
                 mamba_d_state=16, mamba_d_conv=4, mamba_chunk_size=8, mamba_rms_norm=True,
                 mamba_norm_before_gate=True, embedding_multiplier=1.5, lm_head_multiplier=0.75, key_multiplier=0.8,
                 attention_in_multiplier=1.2, attention_out_multiplier=0.9, ssm_in_multiplier=1.1,
                 ssm_out_multiplier=0.7, ssm_multipliers=[0.9, 1.1, 1.2, 0.8, 1.3], mlp_multipliers=[1.25, 0.8])
COHERE = dict(TINY, model_type="cohere", layer_norm_eps=1e-5, logit_scale=0.5, rope_parameters=DEFAULT_ROPE)


@dataclass
class Fixture:
    name: str
    about: str           # one line for the README: what the fixture exercises
    config: dict         # model config kwargs, model_type included
    tokenizer: str       # a tokenizer_styles style
    seed: int
    dtype: str = "float32"
    max_shard_size: str | None = None
    multi_eos: bool = False
    # Rewrites config.json after saving into the older Hub layout (see write_hub_config).
    hub_config: dict = field(default_factory=dict)
    # Stores the experts in MXFP4 as gpt-oss publishes them (see pack_mxfp4); the weights are
    # quantised first, so the golden is transformers' float32 run on exactly the packed values.
    mxfp4: bool = False
    # Stores the layers' projections as FP8 E4M3 with a float scale per FP8_BLOCK x FP8_BLOCK
    # block (quantization_config fp8), as DeepSeek-V3 is published; the golden is transformers'
    # own loading of that folder, which dequantises on a CPU.
    fp8: bool = False
    # (bits, group size or None): stores every Linear but lm_head as compressed-tensors packs a
    # W4A16 / W8A16 checkpoint (see compressed_tensors_checkpoint.py); the golden is transformers'
    # own loading of that folder, which decompresses on the CPU.
    packed_int: tuple | None = None
    # (bits, group size or None): stores every Linear but lm_head as a GPTQ checkpoint (v1 layout,
    # packed by GPTQModel; see gptq_checkpoint.py); the golden is transformers' own loading of that
    # folder, whose GPTQ kernels round each dequantised weight to the f16 scales' type where canrun
    # keeps the exact product: logits agree within GPTQ_LOGIT_TOLERANCE, written into the golden,
    # and the top-1/top-2 gap must be GPTQ_MIN_TOP2_GAP so that the tokens cannot depend on it.
    gptq: tuple | None = None


FIXTURES = [
    Fixture("llama_f32", "Llama, sentencepiece tokenizer (BOS, byte fallback), untied, f32",
            LLAMA, "sentencepiece", seed=101),
    Fixture("llama_bf16", "llama_f32's architecture stored in bf16", LLAMA, "sentencepiece",
            seed=2, dtype="bfloat16"),
    Fixture("llama_f16", "llama_f32's architecture stored in f16", LLAMA, "sentencepiece",
            seed=3, dtype="float16"),
    Fixture("llama_tied", "Llama with tie_word_embeddings (no lm_head tensor in the file)",
            dict(LLAMA, tie_word_embeddings=True), "sentencepiece", seed=4),
    Fixture("llama_sharded", "Llama saved as several safetensors shards + index",
            LLAMA, "sentencepiece", seed=5, max_shard_size="150KB"),
    Fixture("llama3_rope",
            "Llama-3 tokenizer, llama3 rope scaling (all three frequency bands), old Hub "
            "config form: top-level rope_theta, rope_scaling, torch_dtype",
            dict(LLAMA, rope_parameters={
                "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64}),
            "llama3", seed=6, hub_config={"rope": True}),
    Fixture("llama_linear_rope", "Llama with linear rope scaling, factor 2",
            dict(LLAMA, rope_parameters={"rope_type": "linear", "rope_theta": 10000.0,
                                         "factor": 2.0}),
            "llama3", seed=7),
    Fixture("llama_multi_eos",
            "Llama-3 tokenizer, generation_config eos_token_id is a list; generation stops "
            "on a non-first eos id",
            LLAMA, "llama3", seed=108, multi_eos=True),
    Fixture("mistral_sliding", "Mistral, sliding_window 6 on every layer (prompt + 32 crosses it)",
            dict(MISTRAL, sliding_window=6), "sentencepiece", seed=9),
    Fixture("mistral_f32", "Mistral without sliding window (sliding_window null), GPT-2 tokenizer",
            dict(MISTRAL, sliding_window=None), "gpt2", seed=410),
    Fixture("qwen2",
            "Qwen2, q/k/v biases, Llama-3 tokenizer, old Hub config form: rope_theta, no "
            "layer_types, sliding_window 4 present but use_sliding_window false (must be ignored)",
            dict(QWEN2, use_sliding_window=False), "llama3", seed=311,
            hub_config={"rope": True, "drop_layer_types": True, "sliding_window": 4}),
    Fixture("qwen2_sliding",
            "Qwen2, use_sliding_window with window 6 and max_window_layers 1: layer 0 full, "
            "layer 1 sliding",
            dict(QWEN2, use_sliding_window=True, sliding_window=6,
                 max_window_layers=1),
            "llama3", seed=212),
    Fixture("qwen3", "Qwen3, q_norm/k_norm, head_dim 24 != hidden/heads, GPT-2 tokenizer (no BOS)",
            QWEN3, "gpt2", seed=13),
    Fixture("qwen3_bf16", "qwen3's architecture stored in bf16", QWEN3, "gpt2", seed=214,
            dtype="bfloat16"),
    Fixture("phi3", "Phi-3: fused qkv_proj and gate_up_proj, GQA, untied", PHI3, "sentencepiece", seed=1301),
    Fixture("phi3_longrope",
            "Phi-3.5/4-mini style: longrope (short/long factors, original_max_position_embeddings 32 "
            "crossed during generation: transformers recomputes the cache), partial_rotary_factor 0.5, "
            "tied embeddings",
            dict(PHI3, tie_word_embeddings=True, original_max_position_embeddings=32,
                 rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                                  "short_factor": [1.0, 1.3, 1.9, 2.7], "long_factor": [1.1, 2.5, 4.0, 7.5]}),
            "llama3", seed=302),
    Fixture("qwen3_moe", "Qwen3-MoE: 4 experts top-2, norm_topk_prob, layer 1 dense (mlp_only_layers)",
            dict(QWEN3_MOE, norm_topk_prob=True, mlp_only_layers=[1]), "gpt2", seed=303),
    Fixture("qwen2_moe", "Qwen2-MoE: q/k/v biases, 4 experts top-2 without renormalising, gated shared expert",
            QWEN2_MOE, "llama3", seed=304),
    Fixture("mixtral", "Mixtral: w1/w3/w2 experts, top-2 renormalised, sliding_window 6", dict(MIXTRAL, sliding_window=6),
            "sentencepiece", seed=2305),
    Fixture("olmoe", "OLMoE: q/k RMSNorm over all heads, 4 experts top-2", OLMOE, "gpt2", seed=1306),
    Fixture("gemma", "Gemma: (1+w) RMSNorm, sqrt(hidden) embedding scale, GeGLU (tanh), tied", GEMMA,
            "sentencepiece", seed=307),
    Fixture("gemma2",
            "Gemma 2: sandwich norms, sliding window 6 on even layers, attention soft-cap 10, final "
            "soft-cap 30, query_pre_attn_scalar 24",
            GEMMA2, "sentencepiece", seed=308),
    Fixture("gemma3_text",
            "Gemma 3 text: q/k norms, layer 0 sliding (window 6, local rope theta 1e4), layer 1 global "
            "(theta 1e6, linear scaling 2)",
            GEMMA3, "sentencepiece", seed=309),
    Fixture("gpt2", "GPT-2: learned positions, Conv1D c_attn, LayerNorm with biases, gelu_new, tied", GPT2,
            "gpt2", seed=310),
    Fixture("gpt_neox", "GPT-NeoX: parallel residual, rotary on 25% of each head, fused per-head qkv",
            GPT_NEOX, "gpt2", seed=1311),
    Fixture("gpt_neox_sequential", "GPT-NeoX with use_parallel_residual false", dict(GPT_NEOX, use_parallel_residual=False),
            "gpt2", seed=1312),
    Fixture("opt", "OPT: learned positions at offset 2, pre-LayerNorm, relu MLP, tied", OPT, "gpt2", seed=313),
    Fixture("phi", "Phi-2: parallel attention + MLP on one LayerNorm, partial rotary 0.5, lm_head bias", PHI,
            "gpt2", seed=314),
    Fixture("granite", "Granite: embedding 2, residual 0.5, attention 0.125 multipliers, logits / 1.5",
            GRANITE, "llama3", seed=4315),
    Fixture("olmo2", "OLMo 2: post-block norms, q/k RMSNorm over all heads", OLMO2, "gpt2", seed=1316),
    Fixture("smollm3", "SmolLM3: layer 1 without rope (no_rope_layer_interval 2), tied", SMOLLM3, "llama3",
            seed=317),
    Fixture("starcoder2", "StarCoder2: LayerNorm + biases, plain gelu MLP, sliding window 6, tied",
            STARCODER2, "gpt2", seed=318),
    Fixture("stablelm", "StableLM: LayerNorm with biases, q/k/v biases, rotary on 25% of each head",
            STABLELM, "gpt2", seed=319),
    Fixture("stablelm_parallel", "StableLM with use_parallel_residual (one norm per layer)",
            dict(STABLELM, use_parallel_residual=True), "gpt2", seed=3320),
    Fixture("cohere", "Cohere: parallel block on one bias-free LayerNorm, interleaved rotary, logit_scale 0.5",
            COHERE, "llama3", seed=321),
    Fixture("gpt_oss",
            "gpt-oss: attention sinks, q/k/v/o biases, sliding window 6 on even layers, yarn rope "
            "(transformers' default: factor 32, original 4096, no truncation), 4 experts top-2 with "
            "softmax after top-k, clamped SwiGLU, expert biases; unquantised 3-D expert tensors",
            GPT_OSS, "gpt2", seed=1323),
    Fixture("gpt_oss_mxfp4",
            "gpt_oss with its experts stored as MXFP4 blocks and scales (quantization_config "
            "mxfp4), as gpt-oss is published",
            GPT_OSS, "gpt2", seed=1324, mxfp4=True),
    Fixture("deepseek_v2",
            "DeepSeek-V2: multi-head latent attention with q_lora_rank 32, k/v heads of 16+8 and 12, "
            "attention and MLP biases, yarn (factor 4, mscale 0.9, mscale_all_dim 0.7: cos/sin and "
            "softmax scaled; Hub config form: rope_theta, rope_scaling), layer 0 dense, 8 experts "
            "greedy top-2 scaled by 1.5, 2 shared experts",
            dict(DEEPSEEK_V2, q_lora_rank=32, attention_bias=True, mlp_bias=True, n_shared_experts=2,
                 topk_method="greedy", norm_topk_prob=False, routed_scaling_factor=1.5,
                 rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                                  "original_max_position_embeddings": 32, "mscale": 0.9,
                                  "mscale_all_dim": 0.7}),
            "llama3", seed=324, hub_config={"rope": True}),
    Fixture("deepseek_v2_lite",
            "DeepSeek-V2-Lite: q_proj (q_lora_rank null), default rope, layer 0 dense, 8 experts in 4 "
            "groups, group_limited_greedy top-3 of the best 2 groups, norm_topk_prob true (ignored by "
            "transformers), 1 shared expert",
            dict(DEEPSEEK_V2, q_lora_rank=None, n_shared_experts=1, num_experts_per_tok=3,
                 topk_method="group_limited_greedy", n_group=4, topk_group=2, norm_topk_prob=True,
                 rope_parameters=DEFAULT_ROPE),
            "gpt2", seed=3325),
    Fixture("deepseek_v3",
            "DeepSeek-V3: latent attention with q_lora_rank 32, rope in interleaved pairs, layer 0 dense, "
            "8 experts scored by sigmoid + e_score_correction_bias, top-3 among the best 2 of 4 groups "
            "(noaux_tc), renormalised and scaled by 2.5, 1 shared expert",
            dict(DEEPSEEK_V3, q_lora_rank=32, norm_topk_prob=True, rope_parameters=DEFAULT_ROPE),
            "llama3", seed=3401),
    Fixture("deepseek_v3_halves",
            "DeepSeek-V3 with rope_interleave false (rope part rotated in halves), q_proj (q_lora_rank "
            "null), attention biases, yarn (factor 4, mscale_all_dim 0.7; Hub config form), one group, "
            "top-k weights not renormalised",
            dict(DEEPSEEK_V3, q_lora_rank=None, rope_interleave=False, attention_bias=True, n_group=1, topk_group=1,
                 norm_topk_prob=False,
                 rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                                  "original_max_position_embeddings": 32, "mscale": 0.9, "mscale_all_dim": 0.7}),
            "gpt2", seed=3402, hub_config={"rope": True}),
    Fixture("deepseek_v32",
            "DeepSeek-V3.2: deepseek_v3 with the DSA indexer (16 heads of 16, rope on the first 8 in "
            "halves, LayerNorm'd keys) keeping each query's best 6 keys: prompts and generation go past 6",
            dict(DEEPSEEK_V3, model_type="deepseek_v32", q_lora_rank=32, norm_topk_prob=True, index_topk=6,
                 index_n_heads=16, index_head_dim=16, rope_parameters=DEFAULT_ROPE),
            "llama3", seed=3404),
    Fixture("deepseek_v3_fp8",
            "deepseek_v3 as DeepSeek-V3 is published: every layer projection (experts included) in FP8 "
            "E4M3 with an F32 weight_scale_inv per 8x8 block (quantization_config fp8); the golden is "
            "transformers' own FP8 loading, dequantised on the CPU",
            dict(DEEPSEEK_V3, q_lora_rank=32, norm_topk_prob=True, rope_parameters=DEFAULT_ROPE),
            "llama3", seed=3436, fp8=True),
    Fixture("llama_w4a16",
            "llama_f32 as llm-compressor publishes W4A16: every layer projection symmetric int4, packed in "
            "int32 words (compressed-tensors pack-quantized) with an f32 scale per row and group of 32 inputs; "
            "the golden is transformers' own compressed-tensors loading",
            LLAMA, "llama3", seed=3603, packed_int=(4, 32)),
    Fixture("qwen2_w8a16",
            "qwen2 (q/k/v biases kept in float) as a W8A16 checkpoint: symmetric int8 weights packed four to "
            "an int32 word, one f32 scale per row (strategy channel)",
            QWEN2, "gpt2", seed=3603, packed_int=(8, None)),
    Fixture("llama_gptq_int4",
            "llama_f32 as a GPTQ checkpoint (v1 layout, as AutoGPTQ and GPTQModel publish it): every layer "
            "projection symmetric int4 in groups of 32 inputs, packed by GPTQModel; the golden is transformers' "
            "own GPTQ loading (GPTQModel's CPU kernel)",
            LLAMA, "llama3", seed=3624, gptq=(4, 32)),
    Fixture("llama_gptq_int8",
            "llama_f32 as a GPTQ int8 checkpoint with one scale per output (group_size -1)",
            LLAMA, "sentencepiece", seed=3645, gptq=(8, None)),
    Fixture("deepseek_v4",
            "DeepSeek-V4: 4 query heads of 32 over one key=value head (rope on the last 8 dims in pairs, "
            "undone on the output; sinks; grouped output projection), sliding window 8, windows of 4 "
            "compressed in overlapping pairs with an indexer keeping the best 3 (layers 1, 3) or of 8 "
            "(layer 2), 4 hyper-connection streams, 8 experts top-2 by token id (tid2eid) on layers 0-1 "
            "and by sqrtsoftplus + bias on 2-3, scaled 1.5, clamped SwiGLU, 1 shared expert",
            DEEPSEEK_V4, "llama3", seed=3625),
    Fixture("glm_moe_dsa",
            "GLM-5 (glm_moe_dsa): deepseek_v32's blocks with the indexer's rope in pairs (16 heads of 16, "
            "best 6 keys), layer 1 reusing layer 0's choice (indexer_types full, shared, full), 8 "
            "experts in 2 groups, top-3 from the best group",
            dict(DEEPSEEK_V3, model_type="glm_moe_dsa", q_lora_rank=32, norm_topk_prob=True, rms_norm_eps=1e-5,
                 n_group=2, topk_group=1, index_topk=6, index_n_heads=16, index_head_dim=16,
                 indexer_types=["full", "shared", "full"], rope_parameters=DEFAULT_ROPE),
            "gpt2", seed=3409),
    Fixture("glm4_moe_lite",
            "GLM-4.7-Flash (glm4_moe_lite): deepseek_v3's attention and router, mlp_layer_types "
            "[dense, sparse, sparse] by default, first_k_dense_replace absent",
            dict(GLM4_MOE_LITE, q_lora_rank=32, norm_topk_prob=True, rope_parameters=DEFAULT_ROPE),
            "sentencepiece", seed=3403),
    Fixture("minimax_m2",
            "MiniMax-M2: q/k RMSNorm over all heads, rotary on 8 of 16 dims given as the published "
            "top-level rotary_dim, 8 experts (Mixtral layout) chosen by sigmoid + e_score_correction_bias, "
            "top-2 renormalised, on every layer",
            MINIMAX_M2, "gpt2", seed=3405, hub_config={"rotary_dim": True}),
    Fixture("lfm2",
            "LFM2: short gated convolution layers (3 taps, depthwise, causal: the state carries 2 "
            "positions) at 0 and 2, attention with per-head q/k RMSNorm at 1 and 3, SwiGLU of "
            "2/3 x 128 rounded up to 16 = 96, final embedding_norm, tied",
            LFM2, "llama3", seed=3407),
    Fixture("qwen3_5_text",
            "Qwen3.5 text: Gated DeltaNet layers 0-2 (2 key heads of 8 serving 4 value heads of 12, a "
            "4-tap convolution, gated RMSNorm) and full attention at 3 (output gate, per-head q/k norms, "
            "rotary on a quarter of each head), zero-centred RMSNorms",
            QWEN3_5_TEXT, "gpt2", seed=3415),
    Fixture("qwen3_5_moe_text",
            "Qwen3.5-MoE text: qwen3_5_text's layers alternating (layer_types), 4 experts top-2 "
            "renormalised and a sigmoid-gated shared expert on every layer",
            QWEN3_5_MOE_TEXT, "llama3", seed=3417),
    Fixture("qwen3_next",
            "Qwen3-Next: qwen3_5_text's layers with the DeltaNet projections grouped per key head "
            "(in_proj_qkvz, in_proj_ba), 4 experts top-2 renormalised with a gated shared expert, "
            "layer 2 dense (mlp_only_layers)",
            QWEN3_NEXT, "sentencepiece", seed=3421),
    Fixture("nemotron_h",
            "Nemotron-H: one block per layer (hybrid_override_pattern MEM*-E): Mamba-2 (8 heads of 8, "
            "2 groups, 16 states, 4-tap convolution, prefill chunks of 8, dt clamped at 0.01 in prefill), "
            "attention without positions, relu2 MLP, sigmoid-routed relu2 experts in groups with a "
            "shared expert",
            NEMOTRON_H, "llama3", seed=3431, hub_config={"hybrid_pattern": True}),
    Fixture("granitemoehybrid",
            "Granite 4.0-H: Mamba-2 layers 0, 2, 3 (8 heads of 16, 2 groups, 16 states, prefill chunks of 8) "
            "and rope attention at 1, each with 4 experts top-2 (3-D input_linear/output_linear, softmax "
            "over the two) plus a shared SwiGLU (one input_linear); Granite's multipliers",
            GRANITEMOEHYBRID, "gpt2", seed=3439),
    Fixture("granitemoehybrid_dense_nope",
            "granitemoehybrid without experts (the shared SwiGLU alone) and without positions "
            "(position_embedding_type none)",
            dict(GRANITEMOEHYBRID, num_local_experts=0, position_embedding_type="none",
                 layer_types=["mamba", "attention", "mamba", "attention"]), "sentencepiece", seed=3445),
    Fixture("falcon_h1",
            "Falcon-H1: Mamba-2 (mamba_d_ssm 96 of 6 heads, 2 groups, RMSNorm before the gate) beside "
            "attention in every layer, then a SwiGLU; every μP multiplier (embedding, key, attention and "
            "SSM in/out, in_proj's z/x/B/C/dt, MLP gate/down, lm_head) off 1", FALCON_H1, "gpt2", seed=3547),
    Fixture("falcon_h1_no_norm",
            "falcon_h1 without the Mamba RMSNorm (mamba_rms_norm false: y times silu(z) alone)",
            dict(FALCON_H1, mamba_rms_norm=False), "llama3", seed=3543),
    Fixture("llama4_text",
            "Llama 4 text: rope in pairs, L2 q/k norms and chunks of 6 on layers 0 and 2; no rope and "
            "temperature tuning (floor 4) on 1 and 3, which hold 4 top-1 experts (3-D gate_up_proj, input "
            "scaled by sigmoid) plus a shared expert; a SwiGLU of 96 on 0 and 2",
            LLAMA4_TEXT, "llama3", seed=3453),
    Fixture("llama4_scout_rope",
            "llama4_text with Llama 4 Scout's published rope: llama3 scaling by 16 with low_freq_factor "
            "equal to high_freq_factor (1.0), so no band is smoothed; old Hub config form",
            dict(LLAMA4_TEXT, rope_parameters={
                "rope_type": "llama3", "rope_theta": 500000.0, "factor": 16.0,
                "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                "original_max_position_embeddings": 64}),
            "llama3", seed=3459, hub_config={"rope": True}),
    Fixture("gemma4_text",
            "Gemma 4 text: sliding layers (window 6, heads of 16, 2 kv heads) and full ones (heads of 32, "
            "proportional rope rotating 4 of 16 pairs, one kv head whose keys serve as values), plain-weight "
            "RMSNorms, q/k norms and a weightless value norm, attention scale 1, layer scalars, final "
            "soft-cap; config in the Hub's global_head_dim form",
            GEMMA4_TEXT, "sentencepiece", seed=3561,
            hub_config=dict(global_head_dim=32, num_global_key_value_heads=1)),
    Fixture("gemma4_text_moe",
            "gemma4_text with enable_moe_block: 4 routed experts (top 2, 3-D gate_up_proj/down_proj) beside "
            "the dense MLP on every layer, the router reading the residual stream through its scaled RMSNorm, "
            "per-expert weight scales; config as transformers writes it (per_layer_config)",
            dict(GEMMA4_TEXT, enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=32),
            "llama3", seed=3563),
    Fixture("gemma4_text_ple",
            "gemma4_text as E2B/E4B: per-layer inputs of 8 (their own vocabulary of 700) gated into every "
            "layer after its MLP; layers 4 and 5 attend to the cached keys and values of layers 2 and 3 and "
            "have double-wide MLPs; values projected (attention_k_eq_v false)",
            dict(GEMMA4_TEXT, num_hidden_layers=6, layer_types=["sliding_attention", "full_attention"] * 3,
                 attention_k_eq_v=False, hidden_size_per_layer_input=8, vocab_size_per_layer_input=700,
                 num_kv_shared_layers=2, use_double_wide_mlp=True),
            "gpt2", seed=3567),
    Fixture("seed_oss",
            "Seed-OSS: Llama layout with q/k/v biases, none on o_proj (attention_out_bias false), MLP "
            "biases", SEED_OSS, "llama3", seed=3471),
    Fixture("olmo3",
            "OLMo 3: olmo2's post-norms and q/k norm over all heads; layers 0-2 sliding (window 6, default "
            "rope, theta 1e4), layer 3 full attention with yarn (factor 2, theta 5e5)",
            OLMO3, "gpt2", seed=3473),
    Fixture("ernie4_5",
            "ERNIE 4.5: Llama layout rotated in interleaved pairs, biases on every projection (use_bias), "
            "tied", ERNIE4_5, "sentencepiece", seed=3501),
    Fixture("ernie4_5_moe",
            "ERNIE 4.5 MoE: ernie4_5's attention; layer 1 routes to 4 experts (softmax, top-2 chosen with "
            "moe_statics' score bias, renormalised) beside a shared expert, layer 0 dense",
            ERNIE4_5_MOE, "sentencepiece", seed=3523),
    Fixture("exaone4",
            "EXAONE 4.0: post-block RMSNorms, per-head q/k norms; layers 0-2 slide over 6 positions with "
            "rope, layer 3 is full attention without positions", EXAONE4, "gpt2", seed=3485),
    Fixture("ministral3",
            "Ministral 3: Mistral layout, yarn rotary (factor 4, mscale), queries times 1 + 0.1 log(1 + "
            "floor(p / 8))", MINISTRAL3, "llama3", seed=3495),
    Fixture("hunyuan_v1_dense",
            "Hunyuan dense: per-head q/k RMSNorms (query_layernorm, key_layernorm) after the rotation; "
            "rope \"dynamic\" with alpha 50, a fixed stretch of the base", HUNYUAN_V1_DENSE, "llama3",
            seed=3507),
    Fixture("apertus",
            "Apertus: per-head q/k RMSNorms, attention_layernorm / feedforward_layernorm, an ungated MLP "
            "with xIELU (learned alpha_p, alpha_n per layer), llama3 rope", APERTUS, "llama3", seed=3521),
    Fixture("mimo_v2_flash",
            "MiMo-V2-Flash: full layers 0 and 3, sliding layers 1 and 2 (window 5) with twice the kv heads and "
            "sinks; values of 8 beside keys of 16, times 0.707; a rope per kind on half of each head; 4 "
            "sigmoid-routed experts on layers 1-3 (top-2 in the best of 2 groups)",
            MIMO_V2_FLASH, "gpt2", seed=3529),
    Fixture("glm4_moe",
            "GLM-4.5: q/k/v biases, per-head q/k norms, rotary on half of each head; layer 1 holds 4 "
            "sigmoid-routed experts (top-2 of the best 1 of 2 groups, scaled 1.5) and a shared expert",
            GLM4_MOE, "gpt2", seed=3549),
    Fixture("cohere_qk_norm",
            "Command R+ style: cohere with use_qk_norm, a bias-free LayerNorm over each head of q "
            "and k with a weight row per head ([heads, head_dim] tensors)",
            dict(COHERE, use_qk_norm=True), "llama3", seed=3425),
    Fixture("stablelm_qk_layernorm",
            "StableLM 2 12B style: stablelm with qk_layernorm, one bias-free LayerNorm per head of q "
            "and of k (q_layernorm.norms.<h>), GQA",
            dict(STABLELM, qk_layernorm=True, num_key_value_heads=2), "gpt2", seed=3427),
    Fixture("opt_post_norm",
            "opt-350m style: OPT with do_layer_norm_before false (LayerNorm after each residual add, "
            "no final norm) and word_embed_proj_dim 32 < hidden 64 (project_in, project_out, a "
            "32-wide tied head)",
            dict(OPT, do_layer_norm_before=False, word_embed_proj_dim=32), "gpt2", seed=3432),
    Fixture("llama_yarn", "Llama with yarn rope scaling (factor 4, original 32; attention factor on cos/sin)",
            dict(LLAMA, rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                                         "original_max_position_embeddings": 32}),
            "llama3", seed=322),
]


# Families whose RMSNorm multiplies by (1 + w): their norm weights are drawn 1 lower, so the
# effective scale has the same NORM_RANGE as the other families (a larger one makes the tiny
# random network so sensitive that float32 rounding alone moves its logits by ~1e-4).
UNIT_OFFSET_NORMS = ("gemma", "gemma2", "gemma3_text", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_next")
# Plain-weight norms inside those families (Qwen3.5's gated RMSNorm of the DeltaNet layers).
PLAIN_NORMS = ("linear_attn.norm.weight",)
# Scales drawn like norm weights (gemma4's router input scale and per-expert weight scale).
NORM_LIKE = ("router.scale", "router.per_expert_scale")


def randomize_(model, seed):
    """Overwrites every parameter from a generator of its own, independent of the init."""
    gen = torch.Generator().manual_seed(seed)
    unit_offset = model.config.model_type in UNIT_OFFSET_NORMS
    with torch.no_grad():
        for name, p in model.named_parameters():
            # Norm weights are 1-D, but for cohere's per-head q/k norms ([heads, head_dim]).
            per_head_norm = name.endswith(("q_norm.weight", "k_norm.weight"))
            norm_like = ("norm" in name or ".ln_" in name or name.endswith(NORM_LIKE)) and not name.endswith(".bias")
            if (p.dim() == 1 or per_head_norm) and norm_like:
                lo, hi = NORM_RANGE
                norm_shift = 1.0 if unit_offset and not name.endswith(PLAIN_NORMS) else 0.0
                value = lo + (hi - lo) * torch.rand(p.shape, generator=gen) - norm_shift
            elif p.dim() == 1:
                value = BIAS_STD * torch.randn(p.shape, generator=gen)
            elif any(key in name for key in ("embed_tokens", "wte", "wpe", "embed_in", "embed_positions")):
                value = EMBED_STD * torch.randn(p.shape, generator=gen)
            else:
                value = WEIGHT_STD * torch.randn(p.shape, generator=gen)
            p.copy_(value)
        for name, b in model.named_buffers():
            # The noaux_tc routers' score bias is a buffer the checkpoint stores.
            if name.endswith("e_score_correction_bias"):
                b.copy_(BIAS_STD * torch.randn(b.shape, generator=gen))
            # Gemma 4's per-layer scale of the residual stream, stored in the checkpoint.
            if name.endswith("layer_scalar"):
                b.copy_(0.5 + torch.rand(b.shape, generator=gen))
            # DeepSeek-V4's hash routers: each token id's top_k experts, stored in the checkpoint;
            # distinct, as a trained table's are (the first top_k of a permutation per token).
            if name.endswith("tid2eid"):
                perms = [torch.randperm(model.config.n_routed_experts, generator=gen) for _ in range(len(b))]
                b.copy_(torch.stack(perms)[:, :b.shape[1]])


FP4_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                       -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float32)


def quantize_mxfp4(w):
    """Rows of w (float32, [rows, cols], cols a multiple of 32) to MXFP4: blocks [rows, cols/32,
    16] (two E2M1 codes per byte, low nibble first), E8M0 scales [rows, cols/32], and the exact
    dequantised values."""
    rows, cols = w.shape
    groups = w.reshape(rows, cols // 32, 32)
    amax = np.abs(groups).max(-1)
    exponent = np.ceil(np.log2(np.maximum(amax, 1e-30) / 6.0)).astype(np.int32).clip(-127, 127)
    scaled = groups / np.ldexp(np.float32(1.0), exponent)[..., None]
    magnitude = np.abs(np.abs(scaled)[..., None] - FP4_VALUES[:8]).argmin(-1)
    codes = (magnitude + 8 * (scaled < 0)).astype(np.uint8)
    blocks = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    scales = (exponent + 127).astype(np.uint8)
    values = np.ldexp(FP4_VALUES[codes], exponent[..., None]).astype(np.float32).reshape(rows, cols)
    return blocks, scales, values


def quantize_experts_(model):
    """Replaces each gpt-oss expert matrix by its MXFP4 round trip; returns the packed tensors."""
    packed = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith(("experts.gate_up_proj", "experts.down_proj")):
                continue
            # Stored [E, in, out] for x @ W; MXFP4 packs each expert's [out, in] along `in`.
            blocks, scales, values = [], [], []
            for expert in p.detach().float().numpy():
                b, s, v = quantize_mxfp4(np.ascontiguousarray(expert.T))
                blocks.append(b), scales.append(s), values.append(v.T)
            p.copy_(torch.from_numpy(np.stack(values)))
            packed[name + "_blocks"] = torch.from_numpy(np.stack(blocks))
            packed[name + "_scales"] = torch.from_numpy(np.stack(scales))
    return packed


def pack_mxfp4(folder, packed):
    """Rewrites the saved checkpoint with the experts as MXFP4 blocks/scales (U8) and adds the
    quantization_config gpt-oss is published with."""
    from safetensors.torch import load_file, save_file
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    for name in list(tensors):
        if name.endswith(("experts.gate_up_proj", "experts.down_proj")):
            del tensors[name]
    tensors.update(packed)
    save_file(tensors, str(path), metadata={"format": "pt"})
    config_path = folder / "config.json"
    config = json.loads(config_path.read_text())
    config["quantization_config"] = {
        "quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                   "model.embed_tokens", "lm_head"],
    }
    write_json(config_path, config)


FP8_BLOCK = 8  # divides every projection's sides in the fp8 fixtures


def write_tokenizer(fx, folder):
    tok = build_tokenizer(fx.tokenizer)
    tok.save(str(folder / "tokenizer.json"))
    tok_config = dict(TOKENIZER_NAMES[fx.tokenizer], tokenizer_class="PreTrainedTokenizerFast",
                      model_max_length=fx.config["max_position_embeddings"],
                      clean_up_tokenization_spaces=False)
    write_json(folder / "tokenizer_config.json", tok_config)
    return tok


def loaded_config(folder):
    config = AutoConfig.from_pretrained(folder).to_dict()
    del config["_name_or_path"]
    return config


def write_hub_config(folder, hub):
    """Rewrites a transformers-5 config.json into the form most Hub checkpoints still carry.

    canrun must read both forms; transformers must load the rewrite to the same config."""
    path = folder / "config.json"
    before = loaded_config(folder)
    config = json.loads(path.read_text())
    config["torch_dtype"] = config.pop("dtype")
    if hub.get("rope"):
        rope = config.pop("rope_parameters")
        config["rope_theta"] = rope.pop("rope_theta")
        config["rope_scaling"] = None if rope["rope_type"] == "default" else rope
    if hub.get("rotary_dim"):
        rope = config["rope_parameters"]
        config["rotary_dim"] = int(config["head_dim"] * rope.pop("partial_rotary_factor"))
    if hub.get("drop_layer_types"):
        del config["layer_types"]
    if "sliding_window" in hub:
        config["sliding_window"] = hub["sliding_window"]
    if hub.get("global_head_dim"):
        # gemma4's published form: the full layers' head width and kv heads, not per_layer_config.
        del config["per_layer_config"]
        config["global_head_dim"] = hub["global_head_dim"]
        config["num_global_key_value_heads"] = hub["num_global_key_value_heads"]
    if hub.get("hybrid_pattern"):
        # nemotron_h's published form: one letter per layer and the layer count beside it.
        letters = {"linear_attention": "M", "full_attention": "*", "mlp": "-", "moe": "E"}
        layers = config.pop("layers_block_type")
        config["hybrid_override_pattern"] = "".join(letters[layer] for layer in layers)
        config["num_hidden_layers"] = len(layers)
    write_json(path, dict(sorted(config.items())))
    after = loaded_config(folder)
    if hub.get("rotary_dim"):
        after.pop("rotary_dim")  # kept as an attribute beside the partial_rotary_factor it becomes
    assert after == before, f"{folder.name}: Hub-form config loads differently"


def make_fixture(fx, folder, eos_ids):
    """Builds the random model and saves it, its tokenizer and generation config to folder."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    tok = write_tokenizer(fx, folder)
    special = special_token_ids(tok)
    kwargs = copy.deepcopy(fx.config)
    config = AutoConfig.for_model(kwargs.pop("model_type"), vocab_size=tok.get_vocab_size(),
                                  bos_token_id=special["bos_token_id"],
                                  eos_token_id=special["eos_token_id"], **kwargs)
    torch.manual_seed(fx.seed)  # seeds the init's draws too, though randomize_ replaces them
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    randomize_(model, fx.seed)
    fx.packed = quantize_experts_(model) if fx.mxfp4 else None
    model.to(getattr(torch, fx.dtype))
    model.generation_config = GenerationConfig(bos_token_id=special["bos_token_id"],
                                               eos_token_id=eos_ids or special["eos_token_id"])
    save_kwargs = {"max_shard_size": fx.max_shard_size} if fx.max_shard_size else {}
    model.save_pretrained(folder, **save_kwargs)
    if fx.max_shard_size:
        shards = list(folder.glob("model-*-of-*.safetensors"))
        assert len(shards) >= 3, f"{fx.name}: only {len(shards)} shards"
    if fx.hub_config:
        write_hub_config(folder, fx.hub_config)
    if fx.fp8:
        pack_fp8(folder, FP8_BLOCK)
    if fx.packed_int:
        pack_compressed(folder, *fx.packed_int)
    if fx.gptq:
        pack_gptq(folder, *fx.gptq)
    return tok


def prompt_cases(tok):
    """(text, ids) per prompt, encoded as the fixture's tokenizer does with special tokens."""
    cases = []
    for text in PROMPTS:
        if text is None:
            text = "" if len(tok.encode("").ids) == 1 else "The"
        ids = tok.encode(text, add_special_tokens=True).ids
        cases.append((text, ids))
    assert len(cases[0][1]) == 1, "the first prompt must be a single token"
    return cases


def load(folder, attn):
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32,
                                                 attn_implementation=attn)
    return model.eval()


def greedy(model, ids):
    """model.generate, greedy, with the fixture's generation_config; returns new ids, logits."""
    input_ids = torch.tensor([ids])
    out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                         max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                         return_dict_in_generate=True, output_logits=True)
    new_ids = out.sequences[0, len(ids):].tolist()
    return new_ids, torch.stack([step[0] for step in out.logits])


def greedy_without_cache(model, ids, eos_ids):
    """The same greedy decode recomputing the whole sequence each step: no KV cache tricks."""
    seq, new_ids = list(ids), []
    while len(new_ids) < MAX_NEW_TOKENS:
        logits = model(torch.tensor([seq]), use_cache=False).logits[0, -1]
        token = int(logits.argmax())
        seq.append(token)
        new_ids.append(token)
        if token in eos_ids:
            break
    return new_ids


def float32_list(values):
    # str() of a numpy float32 is its shortest round-trip form, which keeps the files small
    # and still parses back to the exact float32.
    return [float(str(v)) for v in values.numpy().astype(np.float32)]


@contextlib.contextmanager
def index_gaps(model):
    """Records, in the list it yields, the gap between the k-th and the (k+1)-th score of every
    choice a sparse attention indexer makes (its scores' topk) while the block runs."""
    gaps = []
    indexers = [m for m in model.modules() if type(m).__name__.endswith("Indexer")]
    topk = torch.Tensor.topk

    def recording_topk(values, k, *args, **kwargs):
        # Only rows with more than k keys it may see choose (the mask puts the others near -inf);
        # none do while there are at most k keys (deepseek_v4 asks for 0 of 0 before a window closes).
        if values.shape[-1] > k:
            rows = values.reshape(-1, values.shape[-1])
            rows = rows[(rows > -1e30).sum(-1) > k]
            if len(rows):
                top = topk(rows, k + 1, dim=-1).values
                gaps.append(float((top[:, k - 1] - top[:, k]).min()))
        return topk(values, k, *args, **kwargs)

    def wrap(forward):
        def indexer_forward(*args, **kwargs):
            torch.Tensor.topk = recording_topk
            try:
                return forward(*args, **kwargs)
            finally:
                torch.Tensor.topk = topk
        return indexer_forward

    originals = [(m, m.forward) for m in indexers]
    for m, forward in originals:
        m.forward = wrap(forward)
    try:
        yield gaps
    finally:
        for m, forward in originals:
            m.forward = forward


def compute_golden(fx, folder, cases):
    eager = load(folder, "eager")
    try:
        sdpa = load(folder, "sdpa")
    except ValueError:  # families whose attention only has an eager path (gemma2: soft-capping)
        sdpa = eager
    eos = eager.generation_config.eos_token_id
    eos_ids = eos if isinstance(eos, list) else [eos]
    golden_cases = []
    with torch.no_grad():
        for text, ids in cases:
            with index_gaps(eager) as gaps:
                new_ids, logits = greedy(eager, ids)
            if gaps and min(gaps) < MIN_INDEX_GAP:
                raise RuntimeError(f"{fx.name} {text!r}: indexer top-k gap {min(gaps):.2e} < {MIN_INDEX_GAP}; "
                                   "change its seed")
            sdpa_ids, sdpa_logits = greedy(sdpa, ids)
            assert sdpa_ids == new_ids, f"{fx.name} {text!r}: sdpa {sdpa_ids} != eager {new_ids}"
            assert torch.allclose(sdpa_logits[0], logits[0], rtol=0, atol=1e-4), fx.name
            no_cache = greedy_without_cache(eager, ids, eos_ids)
            assert no_cache == new_ids, f"{fx.name} {text!r}: no-cache {no_cache} != {new_ids}"
            top2 = logits.topk(2, dim=-1).values
            golden_cases.append({
                "prompt": text,
                "prompt_ids": ids,
                "generated_ids": new_ids,
                "min_top2_gap": float(str(np.float32((top2[:, 0] - top2[:, 1]).min()))),
                "last_logits": float32_list(logits[0]),
            })
    return golden_cases


def pick_extra_eos(cases, primary_eos):
    """Two ids that greedy decoding produces early (steps 3-10) in the single-eos goldens.

    Listing them as eos makes generation stop on an id other than the first of the list."""
    extra = []
    for case in cases:
        seen = case["generated_ids"][:2]
        for token in case["generated_ids"][2:10]:
            if token not in seen and token != primary_eos and token not in extra:
                extra.append(token)
                break
            seen.append(token)
        if len(extra) == 2:
            return extra
    raise RuntimeError("no candidate eos ids; change the fixture's seed")


def build(fx):
    folder = FIXTURES_DIR / fx.name
    tok = make_fixture(fx, folder, eos_ids=None)
    cases = prompt_cases(tok)
    # prompt_ids come from tokenizer.json, as canrun reads it. AutoTokenizer agrees except for
    # model types whose tokenizer transformers 5 rebuilds from the vocab with its own pipeline
    # (qwen2: NFC, single digits), which only matches a tokenizer.json made that way.
    if fx.config["model_type"] not in MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS:
        auto_tok = AutoTokenizer.from_pretrained(folder)
        for text, ids in cases:
            assert auto_tok(text)["input_ids"] == ids, \
                f"{fx.name}: AutoTokenizer disagrees with tokenizers on {text!r}"
    golden_cases = compute_golden(fx, folder, cases)
    if fx.mxfp4:
        # The golden ran on the dequantised values; now store them packed, and check that
        # transformers' own MXFP4 loader (it dequantises on a CPU) gives the same logits.
        pack_mxfp4(folder, fx.packed)
        reloaded = load(folder, "eager")
        with torch.no_grad():
            for case in golden_cases:
                logits = reloaded(torch.tensor([case["prompt_ids"]])).logits[0, -1]
                assert torch.allclose(logits, torch.tensor(case["last_logits"]), rtol=0, atol=1e-4), \
                    f"{fx.name}: transformers reads the packed experts differently"
    if fx.multi_eos:
        primary = special_token_ids(tok)["eos_token_id"]
        eos_ids = [primary] + pick_extra_eos(golden_cases, primary)
        make_fixture(fx, folder, eos_ids=eos_ids)
        golden_cases = compute_golden(fx, folder, cases)
        stops = [c["generated_ids"][-1] for c in golden_cases
                 if len(c["generated_ids"]) < MAX_NEW_TOKENS]
        assert any(s in eos_ids[1:] for s in stops), f"{fx.name}: no case stopped on a later eos"
    min_gap = min(c["min_top2_gap"] for c in golden_cases)
    required_gap = GPTQ_MIN_TOP2_GAP if fx.gptq else MIN_TOP2_GAP
    if min_gap < required_gap:
        raise RuntimeError(f"{fx.name}: top-1/top-2 logit gap {min_gap:.2e} < {required_gap}; "
                           "change its seed")
    golden = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "fixture": fx.name,
        "min_top2_gap": min_gap,
        "cases": golden_cases,
    }
    if fx.packed_int:
        golden["compressed_tensors_version"] = compressed_tensors.__version__
    if fx.gptq:
        golden["gptqmodel_version"] = gptqmodel.__version__
        golden["logit_tolerance"] = GPTQ_LOGIT_TOLERANCE
    (GOLDENS_DIR / f"{fx.name}.json").write_text(golden_json(golden), encoding="utf-8")
    size = sum(f.stat().st_size for f in folder.iterdir())
    print(f"{fx.name:18} {size / 1024:7.0f} KiB  min_top2_gap {min_gap:.4f}  "
          f"generated {[len(c['generated_ids']) for c in golden_cases]}")


def write_readme():
    lines = [
        "# Model goldens",
        "",
        "One JSON per fixture in `tests/fixtures/models/<name>/`: for each prompt, the prompt ids",
        "(tokenizer.json, special tokens added), the greedy `model.generate` ids of transformers",
        f"(max_new_tokens={MAX_NEW_TOKENS}, the fixture's generation_config; eos included when it",
        "stopped generation), the float32 logits of the last prompt position, and the smallest",
        "top-1/top-2 logit gap along the generation (`min_top2_gap`). Computed in float32 on CPU",
        "with eager attention (bf16/f16 weights widened exactly), checked against sdpa and a",
        "cache-free greedy loop.",
        "",
        "Semantics these goldens pin (transformers 5.23):",
        "- sliding window W: the query at position i attends the keys j with i - W < j <= i",
        "  (W keys, itself included), in prefill and in decode alike; qwen2 slides only the",
        "  layers i >= max_window_layers (`layer_types` in the saved config), and ignores",
        "  `sliding_window` when `use_sliding_window` is false.",
        "- The one-token prompt is the bare BOS (\"\" encoded) where the tokenizer adds one.",
        "- qwen2 fixtures: `prompt_ids` come from tokenizer.json via `tokenizers`; transformers'",
        "  AutoTokenizer substitutes its own Qwen2 pipeline (NFC, single digits) for model_type",
        "  qwen2, which differs from these fixtures' Llama-3-style tokenizer on the digit prompt.",
        "- longrope (phi3): the short factors while the sequence is at most",
        "  original_max_position_embeddings long, the long ones past it; when generation first",
        "  crosses that length transformers drops the KV cache and recomputes every position.",
        "- gpt_oss_mxfp4: the golden ran on the MXFP4-dequantised expert values; transformers' own",
        "  MXFP4 loader on the packed folder is checked to give the same logits.",
        "- Gemma-family norms multiply by (1 + w); their random w is drawn 1 lower than other norms.",
        "- deepseek_v2: the router never renormalises the top-k weights (transformers drops",
        "  norm_topk_prob) and multiplies them by routed_scaling_factor; the rope part rotates as",
        "  complex pairs (x[2i], x[2i+1]); q_a_layernorm and kv_a_layernorm use eps 1e-6 whatever",
        "  rms_norm_eps is; the softmax scale is qk_head_dim^-0.5 times yarn_get_mscale(factor,",
        "  mscale_all_dim)^2.",
        "- deepseek_v3 and glm4_moe_lite (noaux_tc, whatever topk_method and scoring_func say): the",
        "  router's sigmoid scores plus e_score_correction_bias rank the groups (sum of each group's",
        "  two best) and then the experts; the chosen experts weigh by their unbiased scores,",
        "  divided by their sum + 1e-20 when norm_topk_prob, times routed_scaling_factor. With",
        "  rope_interleave the rope part's pairs (x[2i], x[2i+1]) rotate and their halves are",
        "  written apart (the same permutation for q and k, so the scores are those of v2's pairs).",
        "  glm4_moe_lite takes its dense/sparse layers from mlp_layer_types (default: layer 0",
        "  dense) and ignores first_k_dense_replace.",
        "- deepseek_v32: each layer's indexer scores the keys a query sees by",
        "  sum_h w_h heads^-0.5 relu(q_h . k dim^-0.5) (queries from the normalised q latent, keys",
        "  LayerNorm'd, rope in halves on their first qk_rope_head_dim dims) and the query attends",
        "  only to the index_topk best (all while it sees no more); generation keeps every choice's",
        "  k-th/(k+1)-th score gap above MIN_INDEX_GAP. glm_moe_dsa: the same with the indexer's",
        "  rope in pairs; a \"shared\" layer (indexer_types) attends to the keys the last \"full\"",
        "  layer before it chose for the same query.",
        "- deepseek_v4: kv_norm(kv_proj(x)) is every head's key and value; queries are RMS-normalised",
        "  per head without a weight; rope turns the last 8 dims in pairs (x[2i], x[2i+1]) with",
        "  rope_theta on sliding layers and compress_rope_theta on the others, and turns the output's",
        "  back by the query's position before o_a_proj (per group of heads) and o_b_proj; each head's",
        "  sink joins its softmax. All layers see the last sliding_window keys; a compressed layer adds",
        "  one entry per closed window of m positions (compress_rates), seen from its last position",
        "  on: per channel, softmax(gate + position_bias) over the window's slots weighs kv, then",
        "  kv_norm and rope at the window's first position. CSA (m = 4) projects two halves and weighs",
        "  the previous window's first halves with this window's second ones (window 0: its own",
        "  alone), and each query sees only the index_topk entries its indexer scores best (all",
        "  while it sees no more): deepseek_v32's score over keys compressed the same way, no",
        "  LayerNorm, rope as above on the last 8 dims. Hyper-connections: with x the unweighted",
        "  RMSNorm of the hc_mult streams side by side, pre = sigmoid(fn x * scale + base) + hc_eps",
        "  weighs the streams into the block, post = 2 sigmoid(...) spreads its output, and comb =",
        "  softmax(...) + hc_eps, Sinkhorn-normalised (columns, then hc_sinkhorn_iters - 1 rounds of",
        "  rows and columns, each over sum + hc_eps), mixes the streams: new_k = post_k out +",
        "  sum_j comb[j, k] stream_j; hc_head's sigmoid weights merge them before the final norm.",
        "  Routers score by sqrt(softplus(logits)); moe layers take the top-k of scores +",
        "  e_score_correction_bias, hash_moe layers the experts tid2eid[token id]; the chosen scores",
        "  are always renormalised (norm_topk_prob is not read) and scaled by routed_scaling_factor.",
        "  Routed and shared SwiGLUs clamp gate <= swiglu_limit and -swiglu_limit <= up <= swiglu_limit.",
        "- qwen3_5_text: transformers prefills its Gated DeltaNet layers with the chunked form of the",
        "  delta rule (chunks of 64) and decodes with the recurrent one; canrun runs the recurrent",
        "  form for both, the same function of the inputs summed in another order. q_proj's rows are",
        "  [q; gate] per head; every RMSNorm multiplies by (1 + w) except the DeltaNet's gated one.",
        "- nemotron_h, granitemoehybrid: transformers prefills Mamba-2 layers with the chunked scan",
        "  (chunk_size) and decodes with the one-position step; canrun runs the recurrence for both.",
        "  The chunked scan clamps dt at time_step_min (nemotron_h) or time_step_limit[0]",
        "  (granitemoehybrid) and the step does not; canrun clamps in a sequence's first run and in any",
        "  run of several positions, as transformers does.",
        "",
        "| fixture | exercises |",
        "|---|---|",
    ]
    lines += [f"| `{fx.name}` | {fx.about} |" for fx in FIXTURES]
    lines += [
        "",
        "Regenerate fixtures and goldens (in a venv with tools/requirements-tools.txt; CPU only,",
        "byte-identical on rerun):",
        "",
        "```",
        "python tools/make_fixtures.py",
        "```",
        "",
    ]
    (GOLDENS_DIR / "README.md").write_text("\n".join(lines))


def golden_json(golden):
    """The golden as JSON with each value on one line: arrays stay compact, diffs readable."""
    def members(obj, indent):
        pad = " " * indent
        return ",\n".join(f"{pad}{json.dumps(k)}: {value(v, indent)}" for k, v in obj.items())

    def value(v, indent):
        end = "\n" + " " * indent
        if isinstance(v, dict):
            return "{\n" + members(v, indent + 2) + end + "}"
        if isinstance(v, list) and v and isinstance(v[0], dict):
            pad = " " * (indent + 2)
            return "[\n" + ",\n".join(pad + value(x, indent + 2) for x in v) + end + "]"
        return json.dumps(v, ensure_ascii=False)

    return value(golden, 0) + "\n"


def write_json(path, obj):
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main():
    names = [fx.name for fx in FIXTURES]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=names, metavar="NAME",
                        help=f"build only this fixture (repeatable); one of {', '.join(names)}")
    args = parser.parse_args()
    # One thread keeps float32 reductions in a fixed order, so reruns write identical files.
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    GOLDENS_DIR.mkdir(parents=True, exist_ok=True)
    for fx in FIXTURES:
        if not args.only or fx.name in args.only:
            build(fx)
    write_readme()


if __name__ == "__main__":
    sys.exit(main())
