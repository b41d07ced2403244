#!/usr/bin/env python3
"""Convert a llama-family GGUF file into a Hugging Face model folder.

The folder holds what transformers 5.23.0 writes after loading the file with
`from_pretrained(dir, gguf_file=...)` and calling `save_pretrained`: config.json,
generation_config.json, model.safetensors (float32), tokenizer.json, tokenizer_config.json and,
when the file has one, chat_template.jinja. It reproduces transformers' GGUF loader step by step
(dequantization through gguf-py, the q/k un-permutation, the config keys it maps, the byte-level
BPE tokenizer it builds) using only gguf, numpy, safetensors and tokenizers, so it runs where
torch does not. tools/make_smollm2_goldens.py checks the result against transformers itself.

Anything the loader would need and this script does not reproduce is an error naming the GGUF
key or tensor, never a silently different model.
"""

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGMLQuantizationType
from gguf.quants import dequantize
from safetensors.numpy import save_file
from tokenizers import AddedToken, Regex, Tokenizer, decoders, pre_tokenizers, processors
from tokenizers.models import BPE

# The transformers release whose GGUF loading and save_pretrained output this script reproduces.
TRANSFORMERS_VERSION = "5.23.0"

# GGUF `llama.*` key -> config.json key, as transformers' GGUF_CONFIG_MAPPING["llama"] has them.
LLAMA_CONFIG_KEYS = {
    "context_length": "max_position_embeddings",
    "block_count": "num_hidden_layers",
    "feed_forward_length": "intermediate_size",
    "embedding_length": "hidden_size",
    "rope.dimension_count": "head_dim",
    "rope.freq_base": "rope_theta",
    "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads",
    "attention.layer_norm_rms_epsilon": "rms_norm_eps",
    "vocab_size": "vocab_size",
}
# Keys transformers would fall back to a LlamaConfig default for; a default would describe
# some other checkpoint, so their absence is an error here. Without head_count_kv transformers
# also skips undoing the q/k permutation, which leaves a broken model.
REQUIRED_LLAMA_KEYS = (
    "context_length",
    "block_count",
    "feed_forward_length",
    "embedding_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.layer_norm_rms_epsilon",
)
# `llama.*` keys that transformers ignores and that only restate the head size.
HEAD_DIM_KEYS = ("attention.key_length", "attention.value_length")

# Token ids transformers copies into the config, under the config's names.
SPECIAL_ID_KEYS = {
    "bos_token": ("tokenizer.ggml.bos_token_id", "bos_token_id"),
    "eos_token": ("tokenizer.ggml.eos_token_id", "eos_token_id"),
    "unk_token": ("tokenizer.ggml.unknown_token_id", "unk_token_id"),
    "pad_token": ("tokenizer.ggml.padding_token_id", "pad_token_id"),
}
# LlamaConfig's defaults for the ids a file may leave out (the eos id is required, see build_config).
DEFAULT_TOKEN_IDS = {"bos_token_id": 1, "pad_token_id": None}

# llama.cpp tensor name -> transformers parameter name.
TENSOR_NAMES = [
    (re.compile(r"token_embd\.weight"), "model.embed_tokens.weight"),
    (re.compile(r"output_norm\.weight"), "model.norm.weight"),
    (re.compile(r"output\.weight"), "lm_head.weight"),
    (re.compile(r"blk\.(\d+)\.attn_norm\.weight"), "model.layers.{}.input_layernorm.weight"),
    (re.compile(r"blk\.(\d+)\.ffn_norm\.weight"), "model.layers.{}.post_attention_layernorm.weight"),
    (re.compile(r"blk\.(\d+)\.attn_q\.weight"), "model.layers.{}.self_attn.q_proj.weight"),
    (re.compile(r"blk\.(\d+)\.attn_k\.weight"), "model.layers.{}.self_attn.k_proj.weight"),
    (re.compile(r"blk\.(\d+)\.attn_v\.weight"), "model.layers.{}.self_attn.v_proj.weight"),
    (re.compile(r"blk\.(\d+)\.attn_output\.weight"), "model.layers.{}.self_attn.o_proj.weight"),
    (re.compile(r"blk\.(\d+)\.ffn_gate\.weight"), "model.layers.{}.mlp.gate_proj.weight"),
    (re.compile(r"blk\.(\d+)\.ffn_up\.weight"), "model.layers.{}.mlp.up_proj.weight"),
    (re.compile(r"blk\.(\d+)\.ffn_down\.weight"), "model.layers.{}.mlp.down_proj.weight"),
]

# tokenizer.ggml.pre -> the split regex transformers puts in front of ByteLevel
# (GGUF_PRE_TOKENIZER_SPLITS in transformers/integrations/gguf/gguf_tokenizer_mapping.py).
# Any other value keeps GPT2Tokenizer's plain ByteLevel pre-tokenizer.
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_TEKKEN_SPLIT = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_GPT4O_SPLIT = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN35_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
PRE_TOKENIZER_SPLITS = {
    **dict.fromkeys(
        ["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
         "jina-v5-nano", "dbrx", "smaug-bpe"],
        _LLAMA3_SPLIT,
    ),
    "tekken": _TEKKEN_SPLIT,
    **dict.fromkeys(["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez"], _QWEN2_SPLIT),
    "qwen35": _QWEN35_SPLIT,
    **dict.fromkeys(["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"], _GPT4O_SPLIT),
}

TOKEN_TYPE_CONTROL = 3
TOKEN_TYPE_USER_DEFINED = 4


class ConversionError(Exception):
    pass


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table, in which byte-level vocabularies are spelled."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {byte: chr(char) for byte, char in zip(printable, chars)}


def read_metadata(reader: GGUFReader) -> dict:
    return {name: field.contents() for name, field in reader.fields.items()}


def build_config(meta: dict, tensor_names: set[str]) -> dict:
    """config.json as LlamaConfig serializes the dict transformers' GGUF loader builds."""
    arch = meta.get("general.architecture")
    if arch != "llama":
        raise ConversionError(f"general.architecture is {arch!r}; only 'llama' is supported")
    if meta.get("general.name") == "mistral":
        # transformers switches to model_type mistral for this exact name
        raise ConversionError("general.name is 'mistral', which transformers loads as MistralConfig; not supported")

    for key in REQUIRED_LLAMA_KEYS:
        if f"llama.{key}" not in meta:
            raise ConversionError(f"GGUF metadata lacks llama.{key}")
    for key in meta:
        if not key.startswith("llama."):
            continue
        short = key[len("llama."):]
        if short not in LLAMA_CONFIG_KEYS and short not in HEAD_DIM_KEYS:
            raise ConversionError(f"GGUF key {key} = {meta[key]!r} is not supported (transformers would drop it)")

    mapped = {LLAMA_CONFIG_KEYS[k]: meta[f"llama.{k}"] for k in LLAMA_CONFIG_KEYS if f"llama.{k}" in meta}
    hidden, heads = mapped["hidden_size"], mapped["num_attention_heads"]
    head_dim = mapped.get("head_dim", hidden // heads)
    for key in HEAD_DIM_KEYS:
        if meta.get(f"llama.{key}", head_dim) != head_dim:
            raise ConversionError(
                f"GGUF key llama.{key} = {meta[f'llama.{key}']} differs from the head size {head_dim}"
            )
    if hidden % heads:
        raise ConversionError(
            f"llama.embedding_length {hidden} is not a multiple of llama.attention.head_count {heads}"
        )

    if "tokenizer.ggml.eos_token_id" not in meta:
        # transformers would take LlamaConfig's eos_token_id=2, which need not end anything here
        raise ConversionError("GGUF metadata lacks tokenizer.ggml.eos_token_id")
    token_ids = dict(DEFAULT_TOKEN_IDS)
    for gguf_key, config_key in SPECIAL_ID_KEYS.values():
        if gguf_key in meta:
            token_ids[config_key] = meta[gguf_key]

    config = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "dtype": "float32",
        "head_dim": head_dim,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": mapped["intermediate_size"],
        "max_position_embeddings": mapped["max_position_embeddings"],
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": heads,
        "num_hidden_layers": mapped["num_hidden_layers"],
        "num_key_value_heads": mapped["num_key_value_heads"],
        "pretraining_tp": 1,
        "rms_norm_eps": mapped["rms_norm_eps"],
        "rope_parameters": {"rope_theta": mapped.get("rope_theta", 10000.0), "rope_type": "default"},
        # llama.cpp writes output.weight only when the head is not the embedding matrix
        "tie_word_embeddings": "output.weight" not in tensor_names,
        "transformers_version": TRANSFORMERS_VERSION,
        "use_cache": True,
        "vocab_size": mapped.get("vocab_size", len(meta.get("tokenizer.ggml.tokens", ()))),
        **token_ids,
    }
    if "general.name" in meta:
        # transformers maps general.name to this key and save_pretrained keeps it
        config["_model_name_or_path"] = meta["general.name"]
    return config


def build_generation_config(config: dict) -> dict:
    """generation_config.json as GenerationConfig.from_model_config writes it."""
    generation = {
        "_from_model_config": True,
        "output_attentions": False,
        "output_hidden_states": False,
        "transformers_version": TRANSFORMERS_VERSION,
        "use_cache": True,
    }
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if config.get(key) is not None:
            generation[key] = config[key]
    return generation


def build_tokenizer(meta: dict) -> tuple[Tokenizer, dict]:
    """The tokenizer transformers' GGUF converter builds (byte-level BPE via GPT2Tokenizer),
    and its tokenizer_config.json."""
    model = meta.get("tokenizer.ggml.model")
    if model != "gpt2":
        raise ConversionError(
            f"tokenizer.ggml.model is {model!r}; only 'gpt2' (byte-level BPE) tokenizers are supported"
        )
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges"):
        if key not in meta:
            raise ConversionError(f"GGUF metadata lacks {key}")
    tokens = meta["tokenizer.ggml.tokens"]
    token_types = meta.get("tokenizer.ggml.token_type", [])
    merges = meta["tokenizer.ggml.merges"]

    spelling = bytes_to_unicode()
    alphabet = set(spelling.values())
    # A token outside the byte alphabet is stored as text; transformers respells it from its UTF-8 bytes.
    vocab = {
        token if set(token) <= alphabet else "".join(spelling[b] for b in token.encode("utf-8")): index
        for index, token in enumerate(tokens)
    }
    tokenizer = Tokenizer(
        BPE(
            vocab=vocab,
            merges=[tuple(merge.split(" ")) for merge in merges],
            dropout=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
        )
    )
    split = PRE_TOKENIZER_SPLITS.get(meta.get("tokenizer.ggml.pre"))
    if split is None:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(split), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tokenizer.decoder = decoders.ByteLevel()

    # Added tokens, in the order transformers adds them (the order decides the id of any token
    # missing from the vocabulary): GPT2Tokenizer's default "<|endoftext|>", then the tokens the
    # file marks CONTROL (skipping ones spelled outside the byte alphabet, which llama.cpp
    # mislabels), then USER_DEFINED ones as plain added tokens, then the named special tokens.
    def special(content: str) -> AddedToken:
        return AddedToken(content, normalized=False, special=True)

    tokenizer.add_tokens([special("<|endoftext|>")])
    tokenizer.add_special_tokens(
        [special(t) for t, kind in zip(tokens, token_types) if kind == TOKEN_TYPE_CONTROL and set(t) <= alphabet]
    )
    user_defined = [t for t, kind in zip(tokens, token_types) if kind == TOKEN_TYPE_USER_DEFINED and t in vocab]
    if user_defined:
        tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in user_defined])

    named = {}
    for name, (gguf_key, _) in SPECIAL_ID_KEYS.items():
        token_id = meta.get(gguf_key)
        if token_id is not None and not 0 <= token_id < len(tokens):
            raise ConversionError(f"{gguf_key} = {token_id} is outside the vocabulary of {len(tokens)} tokens")
        named[name] = tokens[token_id] if token_id is not None else None
    already = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
    missing = [special(t) for t in named.values() if t is not None and t not in already]
    if missing:
        tokenizer.add_tokens(missing)

    add_bos = bool(meta.get("tokenizer.ggml.add_bos_token", False)) and named["bos_token"] is not None
    add_eos = bool(meta.get("tokenizer.ggml.add_eos_token", False)) and named["eos_token"] is not None
    bos, eos = named["bos_token"], named["eos_token"]
    single = f"{bos + ':0 ' if add_bos else ''}$A:0{' ' + eos + ':0' if add_eos else ''}"
    pair = f"{single}{' ' + bos + ':1' if add_bos else ''} $B:1{' ' + eos + ':1' if add_eos else ''}"
    special_ids = []
    if add_bos:
        special_ids.append((bos, tokenizer.token_to_id(bos)))
    if add_eos:
        special_ids.append((eos, tokenizer.token_to_id(eos)))
    tokenizer.post_processor = processors.TemplateProcessing(single=single, pair=pair, special_tokens=special_ids)

    tokenizer_config = {
        "backend": "tokenizers",
        # the two keys below are from_pretrained arguments that transformers' save_pretrained
        # writes for a tokenizer loaded from a local GGUF file; kept so the folders are identical
        "is_local": True,
        "local_files_only": False,
        "model_max_length": int(1e30),
        "tokenizer_class": "TokenizersBackend",
        **named,
    }
    return tokenizer, tokenizer_config


def tensor_hf_name(gguf_name: str) -> str:
    for pattern, hf_name in TENSOR_NAMES:
        match = pattern.fullmatch(gguf_name)
        if match:
            return hf_name.format(*match.groups())
    raise ConversionError(f"GGUF tensor {gguf_name} has no llama counterpart in transformers (it would be dropped)")


def unpermute_rows(weights: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's per-head reordering of q/k rows (rotary halves -> interleaved pairs),
    exactly as transformers' LlamaTensorProcessor does."""
    dim = weights.shape[0] // n_head // 2
    return weights.reshape(n_head, dim, 2, *weights.shape[1:]).swapaxes(2, 1).reshape(weights.shape)


def build_weights(reader: GGUFReader, config: dict) -> dict[str, np.ndarray]:
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    tensors = {}
    for tensor in reader.tensors:
        hf_name = tensor_hf_name(tensor.name)
        try:
            weights = dequantize(tensor.data, tensor.tensor_type)
        except NotImplementedError as error:
            raise ConversionError(
                f"GGUF tensor {tensor.name} has type {GGMLQuantizationType(tensor.tensor_type).name}, "
                f"which gguf-py cannot dequantize ({error})"
            ) from None
        if ".attn_q." in tensor.name:
            weights = unpermute_rows(weights, heads)
        elif ".attn_k." in tensor.name:
            weights = unpermute_rows(weights, kv_heads)
        tensors[hf_name] = np.ascontiguousarray(weights, dtype=np.float32)
    check_weights(tensors, config)
    return tensors


def check_weights(tensors: dict[str, np.ndarray], config: dict) -> None:
    """Every parameter LlamaForCausalLM has, at its shape, and nothing else."""
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    q_rows = config["num_attention_heads"] * config["head_dim"]
    kv_rows = config["num_key_value_heads"] * config["head_dim"]
    expected = {"model.embed_tokens.weight": (config["vocab_size"], hidden), "model.norm.weight": (hidden,)}
    if not config["tie_word_embeddings"]:
        expected["lm_head.weight"] = (config["vocab_size"], hidden)
    for layer in range(config["num_hidden_layers"]):
        prefix = f"model.layers.{layer}."
        expected.update(
            {
                prefix + "input_layernorm.weight": (hidden,),
                prefix + "post_attention_layernorm.weight": (hidden,),
                prefix + "self_attn.q_proj.weight": (q_rows, hidden),
                prefix + "self_attn.k_proj.weight": (kv_rows, hidden),
                prefix + "self_attn.v_proj.weight": (kv_rows, hidden),
                prefix + "self_attn.o_proj.weight": (hidden, q_rows),
                prefix + "mlp.gate_proj.weight": (inter, hidden),
                prefix + "mlp.up_proj.weight": (inter, hidden),
                prefix + "mlp.down_proj.weight": (hidden, inter),
            }
        )
    missing = sorted(expected.keys() - tensors.keys())
    if missing:
        more = " ..." if len(missing) > 5 else ""
        raise ConversionError(f"the GGUF file has no tensor for {', '.join(missing[:5])}{more}")
    extra = sorted(tensors.keys() - expected.keys())
    if extra:
        raise ConversionError(f"the GGUF file has tensors beyond the config's layers: {', '.join(extra[:5])}")
    for name, shape in expected.items():
        if tensors[name].shape != shape:
            raise ConversionError(f"tensor {name} has shape {tensors[name].shape}, expected {shape} from the config")


def write_json(path: Path, data: dict) -> None:
    # the formatting transformers' save_pretrained uses
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def convert(gguf_path: Path, out_dir: Path) -> None:
    reader = GGUFReader(gguf_path)
    meta = read_metadata(reader)
    config = build_config(meta, {t.name for t in reader.tensors})
    tokenizer, tokenizer_config = build_tokenizer(meta)
    tensors = build_weights(reader, config)

    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "config.json", config)
    write_json(out_dir / "generation_config.json", build_generation_config(config))
    save_file(tensors, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save(str(out_dir / "tokenizer.json"))
    write_json(out_dir / "tokenizer_config.json", tokenizer_config)
    if "tokenizer.chat_template" in meta:
        (out_dir / "chat_template.jinja").write_text(meta["tokenizer.chat_template"], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("gguf", type=Path, help="the .gguf file to convert")
    parser.add_argument("out_dir", type=Path, help="folder to write the model into (created; must be empty)")
    args = parser.parse_args()

    if not args.gguf.is_file():
        parser.error(f"{args.gguf}: no such file")
    if args.out_dir.exists() and any(args.out_dir.iterdir()):
        parser.error(f"{args.out_dir} is not empty; remove it first")
    try:
        convert(args.gguf, args.out_dir)
    except ConversionError as error:
        print(f"convert_gguf_to_hf: {args.gguf}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
