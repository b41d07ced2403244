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
import copy
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig
from transformers.models.auto.tokenization_auto import MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS

from tokenizer_styles import build_tokenizer, special_token_ids

ROOT = Path(__file__).resolve().parent.parent
FIXTURES_DIR = ROOT / "tests" / "fixtures" / "models"
GOLDENS_DIR = ROOT / "tests" / "goldens" / "models"
MAX_NEW_TOKENS = 32
# Reordered float32 sums move these logits (magnitude ~10) by ~1e-5; a 5e-3 gap leaves a wide
# margin before a different but correct implementation could pick another token.
MIN_TOP2_GAP = 5e-3
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
]


def randomize_(model, seed):
    """Overwrites every parameter from a generator of its own, independent of the init."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and "norm" in name:
                lo, hi = NORM_RANGE
                value = lo + (hi - lo) * torch.rand(p.shape, generator=gen)
            elif p.dim() == 1:
                value = BIAS_STD * torch.randn(p.shape, generator=gen)
            elif "embed_tokens" in name:
                value = EMBED_STD * torch.randn(p.shape, generator=gen)
            else:
                value = WEIGHT_STD * torch.randn(p.shape, generator=gen)
            p.copy_(value)


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
    if hub.get("drop_layer_types"):
        del config["layer_types"]
    if "sliding_window" in hub:
        config["sliding_window"] = hub["sliding_window"]
    write_json(path, dict(sorted(config.items())))
    assert loaded_config(folder) == before, f"{folder.name}: Hub-form config loads differently"


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


def compute_golden(fx, folder, cases):
    eager, sdpa = load(folder, "eager"), load(folder, "sdpa")
    eos = eager.generation_config.eos_token_id
    eos_ids = eos if isinstance(eos, list) else [eos]
    golden_cases = []
    with torch.no_grad():
        for text, ids in cases:
            new_ids, logits = greedy(eager, ids)
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
    if fx.multi_eos:
        primary = special_token_ids(tok)["eos_token_id"]
        eos_ids = [primary] + pick_extra_eos(golden_cases, primary)
        make_fixture(fx, folder, eos_ids=eos_ids)
        golden_cases = compute_golden(fx, folder, cases)
        stops = [c["generated_ids"][-1] for c in golden_cases
                 if len(c["generated_ids"]) < MAX_NEW_TOKENS]
        assert any(s in eos_ids[1:] for s in stops), f"{fx.name}: no case stopped on a later eos"
    min_gap = min(c["min_top2_gap"] for c in golden_cases)
    if min_gap < MIN_TOP2_GAP:
        raise RuntimeError(f"{fx.name}: top-1/top-2 logit gap {min_gap:.2e} < {MIN_TOP2_GAP}; "
                           "change its seed")
    golden = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "fixture": fx.name,
        "min_top2_gap": min_gap,
        "cases": golden_cases,
    }
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
