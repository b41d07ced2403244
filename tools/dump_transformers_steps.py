#!/usr/bin/env python3
"""Dump transformers' module activations for one prefill pass, to bisect a disagreement with canrun.

Run with the dev-time tools venv (tools/requirements-tools.txt):

    python tools/dump_transformers_steps.py MODEL_DIR --out DIR --canrun-dump CANRUN_DIR
    python tools/dump_transformers_steps.py MODEL_DIR --out DIR --prompt-ids 1,2,3 [--modules REGEX]

The model is loaded as tools/make_fixtures.py loads it for the goldens: AutoModelForCausalLM in
float32 on the CPU with eager attention (bf16/f16 checkpoints widened to float32). Forward hooks
record the tensors during ONE forward pass over the prompt ids (no generation).

What is captured:
  --canrun-dump  the prompt ids and every (module, capture) pair named in CANRUN_DIR/manifest.json
                 (the folder `canrun generate --dump` writes); canrun's entries without a module
                 are ignored. A module the model does not have goes in the manifest's "missing"
                 list, with a warning.
  --prompt-ids   the output of every submodule that runs (the top-level model is left out: its
                 logits are lm_head's output), plus the input of every nn.Linear, of every
                 decoder layer (transformers' GradientCheckpointingLayer, e.g. model.layers.N)
                 and of every norm (a class named *Norm*: its input is the residual stream).
  --modules      keeps only the modules whose dotted name matches REGEX (re.search).

A capture "output" is the module's forward output (its first element when it returns a tuple or
a ModelOutput); "input" is its first positional argument, or the hidden_states keyword argument
when it is called with keywords only (self_attn is). A module that runs more than once keeps
its first call's tensor; its entry's "calls" says how many there were.

Each tensor is written as a float32 .npy of shape [seq, -1]: the batch axis of 1 is dropped and
the prompt-position axis comes first ([1, seq, heads, head_dim] -> [seq, heads*head_dim];
[1, heads, seq, head_dim], as gemma3's q_norm takes it, is transposed first). A tensor with no
axis of the prompt's length (e.g. the rows of the tokens routed to MoE experts) cannot be laid out
so and goes in the manifest's "skipped" list with the reason, as does a module that never ran or
whose value is not a tensor. Pick a prompt length that differs from the head counts, so that the
position axis is never ambiguous (a warning says when it is).

DIR/manifest.json: {"format": "transformers-dump-1", "transformers", "torch", "model",
"prompt_ids", "entries": [{"module", "capture", "file", "shape", "calls"}], "missing": [names],
"skipped": [{"module", "capture", "reason"}]}. tools/compare_steps.py compares it with canrun's.
"""
import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM
from transformers.modeling_layers import GradientCheckpointingLayer

# The manifest formats, captures and bad-input error are compare_steps.py's (numpy only, beside this file).
from compare_steps import CANRUN_FORMAT, CAPTURES, TRANSFORMERS_FORMAT as FORMAT, InputError, read_manifest


class ModelError(Exception):
    """The model folder cannot be loaded: reported as one line on stderr, exit status 1."""


def warn(message):
    print(f"warning: {message}", file=sys.stderr)


def parse_prompt_ids(text):
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        raise InputError(f"--prompt-ids {text!r}: expected comma-separated integers such as 1,2,3") from None
    if any(i < 0 for i in ids):
        raise InputError(f"--prompt-ids {text!r}: ids must not be negative")
    return ids


def read_canrun_manifest(folder):
    """The prompt ids and the distinct (module, capture) pairs of canrun's dump, in entry order."""
    manifest = read_manifest(folder, CANRUN_FORMAT)
    path = folder / "manifest.json"
    ids = manifest["prompt_ids"]
    if not ids or not all(type(i) is int and i >= 0 for i in ids):
        raise InputError(f"{path}: field prompt_ids must be a non-empty list of non-negative integers")
    requests = []
    for position, entry in enumerate(manifest["entries"]):
        module, capture = entry.get("module"), entry.get("capture")
        if module is None:
            continue
        if not isinstance(module, str) or capture not in CAPTURES:
            raise InputError(f"{path}: entries[{position}] (step {entry.get('step')!r}): module must be a "
                             f"string and capture one of {', '.join(CAPTURES)}, got {module!r}, {capture!r}")
        if (module, capture) not in requests:
            requests.append((module, capture))
    return ids, requests


def load_model(folder):
    """float32 on the CPU with eager attention, as the goldens of tools/make_fixtures.py are made."""
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    except Exception as e:  # transformers raises many types; the first line names the problem
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"{folder}: cannot load the model: {message}") from None
    return model.eval()


def check_prompt_ids(ids, model, folder):
    vocab = model.get_input_embeddings().num_embeddings
    too_large = [i for i in ids if i >= vocab]
    if too_large:
        raise InputError(f"prompt ids {too_large} are not below the vocabulary size {vocab} of {folder}")


def first_tensor(value):
    """The tensor a hook records: the value itself, or the first element of a tuple or ModelOutput."""
    if isinstance(value, transformers.utils.ModelOutput):
        value = value.to_tuple()
    if isinstance(value, (tuple, list)):
        value = value[0] if value else None
    return value if torch.is_tensor(value) else None


def position_rows(name, capture, tensor, seq):
    """tensor as a float32 [seq, -1] array with the prompt position first, or the reason it cannot be."""
    shape = tuple(tensor.shape)
    body = shape[1:] if len(shape) >= 2 and shape[0] == 1 else shape
    position_axes = [axis for axis, size in enumerate(body) if size == seq]
    if not position_axes:
        return None, f"shape {list(shape)} has no axis of the prompt length {seq}"
    axis = position_axes[0]
    if len(position_axes) > 1 and seq > 1:
        warn(f"{name} {capture} shape {list(shape)}: several axes have the prompt length {seq}; "
             f"took axis {axis + len(shape) - len(body)} (use a prompt of another length)")
    rows = tensor.detach().to(torch.float32).reshape(body).movedim(axis, 0).reshape(seq, -1)
    return np.ascontiguousarray(rows.cpu().numpy()), None


class Recorder:
    """Forward hooks that keep the first call's tensor of each (module, capture) and count the calls."""

    def __init__(self, seq):
        self.seq = seq
        self.order = []      # (module, capture) in the order they were first recorded
        self.arrays = {}
        self.calls = {}
        self.reasons = {}
        self.handles = []

    def watch(self, name, module, capture):
        if capture == "output":
            hook = lambda _module, _args, output: self.record(name, capture, first_tensor(output))
            self.handles.append(module.register_forward_hook(hook))
        else:
            def hook(_module, args, kwargs):
                value = args[0] if args else kwargs.get("hidden_states")
                self.record(name, capture, value if torch.is_tensor(value) else None)
            self.handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))

    def record(self, name, capture, tensor):
        key = (name, capture)
        self.calls[key] = self.calls.get(key, 0) + 1
        if self.calls[key] > 1:
            return
        if tensor is None:
            self.reasons[key] = f"its {capture} is not a tensor"
            return
        rows, reason = position_rows(name, capture, tensor, self.seq)
        if rows is None:
            self.reasons[key] = reason
            return
        self.order.append(key)
        self.arrays[key] = rows

    def remove(self):
        for handle in self.handles:
            handle.remove()


def is_norm(module):
    return "norm" in type(module).__name__.lower()


def requests_for_all_modules(model):
    """Every submodule's output, plus the inputs of every nn.Linear, decoder layer and norm.

    A norm's input is where transformers' residual stream shows mid-layer (post_attention_layernorm
    takes the sum after attention); no module outputs it. Containers (nn.ModuleList, nn.ModuleDict)
    are left out: they have no forward of their own.
    """
    requests = []
    for name, module in model.named_modules():
        if not name or isinstance(module, (torch.nn.ModuleList, torch.nn.ModuleDict)):
            continue
        requests.append((name, "output"))
        if isinstance(module, (torch.nn.Linear, GradientCheckpointingLayer)) or is_norm(module):
            requests.append((name, "input"))
    return requests


def clear_previous_dump(out):
    """Removes the files a previous transformers dump in out listed, so that none of them goes stale."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: not a folder")
    path = out / "manifest.json"
    if not path.exists():
        return
    try:
        previous = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        previous = None
    if not isinstance(previous, dict) or previous.get("format") != FORMAT:
        raise InputError(f"--out {out}: holds a manifest.json that is not a {FORMAT} dump; choose another folder")
    for entry in previous.get("entries", []):
        if isinstance(entry, dict) and isinstance(entry.get("file"), str):
            (out / Path(entry["file"]).name).unlink(missing_ok=True)
    path.unlink()


def file_name(index, module, capture):
    return f"{index:04d}_{module}.{capture}.npy"


def run_and_record(model, prompt_ids, requests):
    """One forward pass with hooks on the requested modules; returns the recorder, missing names, skipped."""
    modules = dict(model.named_modules())
    missing = []
    for name, _ in requests:
        if name not in modules and name not in missing:
            warn(f"the model has no module {name}; listed as missing")
            missing.append(name)
    recorder = Recorder(len(prompt_ids))
    for name, capture in requests:
        if name in modules:
            recorder.watch(name, modules[name], capture)
    input_ids = torch.tensor([prompt_ids])
    with torch.no_grad():
        model(input_ids, attention_mask=torch.ones_like(input_ids))
    recorder.remove()
    skipped = []
    for name, capture in requests:
        key = (name, capture)
        if recorder.calls.get(key, 0) > 1:
            warn(f"{name} ran {recorder.calls[key]} times; its {capture} is the first call's")
        if name in modules and key not in recorder.arrays:
            reason = recorder.reasons.get(key, "it did not run in the forward pass")
            warn(f"{name} {capture}: not dumped: {reason}")
            skipped.append({"module": name, "capture": capture, "reason": reason})
    return recorder, missing, skipped


def write_dump(out, model_dir, prompt_ids, recorder, missing, skipped):
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for index, key in enumerate(recorder.order):
        name, capture = key
        rows = recorder.arrays[key]
        file = file_name(index, name, capture)
        np.save(out / file, rows)
        entries.append({"module": name, "capture": capture, "file": file, "shape": list(rows.shape),
                        "calls": recorder.calls[key]})
    manifest = {"format": FORMAT, "transformers": transformers.__version__, "torch": torch.__version__,
                "model": str(model_dir), "prompt_ids": prompt_ids, "entries": entries,
                "missing": missing, "skipped": skipped}
    (out / "manifest.json").write_text(manifest_text(manifest))
    return len(entries)


def manifest_text(manifest):
    """JSON with one line per field and per list item, so that a committed dump diffs line by line."""
    def field(key, value):
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n".join(f"  {json.dumps(item)}" for item in value)
            return f" {json.dumps(key)}: [\n{items}\n ]"
        return f" {json.dumps(key)}: {json.dumps(value)}"
    return "{\n" + ",\n".join(field(key, value) for key, value in manifest.items()) + "\n}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path, metavar="MODEL_DIR")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--canrun-dump", type=Path, metavar="CANRUN_DIR",
                        help="dump the (module, capture) pairs of canrun's manifest, for its prompt ids")
    source.add_argument("--prompt-ids", metavar="IDS", help="comma-separated ids; dump every module")
    parser.add_argument("--modules", metavar="REGEX", help="keep only modules whose name matches (re.search)")
    args = parser.parse_args()

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    try:
        if not args.model_dir.is_dir():
            raise InputError(f"{args.model_dir}: not a folder")
        try:
            pattern = re.compile(args.modules or "")
        except re.error as e:
            raise InputError(f"--modules {args.modules!r}: not a regular expression: {e}") from None
        if args.canrun_dump is not None:
            prompt_ids, requests = read_canrun_manifest(args.canrun_dump)
        else:
            prompt_ids, requests = parse_prompt_ids(args.prompt_ids), None
        clear_previous_dump(args.out)
        model = load_model(args.model_dir)
        check_prompt_ids(prompt_ids, model, args.model_dir)
        if requests is None:
            requests = requests_for_all_modules(model)
        requests = [(name, capture) for name, capture in requests if pattern.search(name)]
        recorder, missing, skipped = run_and_record(model, prompt_ids, requests)
        count = write_dump(args.out, args.model_dir, prompt_ids, recorder, missing, skipped)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{args.out}: {count} tensors for {len(prompt_ids)} prompt ids")
    return 0


if __name__ == "__main__":
    sys.exit(main())
