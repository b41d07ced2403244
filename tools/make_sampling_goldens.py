#!/usr/bin/env python3
"""Make tests/goldens/sampling.json: what transformers' sampling does, for canrun's Sampler.

Run with the dev-time tools venv (tools/requirements-tools.txt):

    /work/venv-tools/bin/python tools/make_sampling_goldens.py

It records
- `processors`: each of transformers' logits processor classes (repetition penalty,
  temperature, top-k, top-p, min-p) applied alone to a small hand-made score vector with ties;
- `settings`: for the llama_f32 fixture and one prompt, the scores after the processors that
  `model.generate(..., max_new_tokens=1)` itself builds for a few sampling settings (their class
  names in the order generate applied them), as the tokens kept and their softmax
  probabilities, with the margin by which each cutoff is clear of the nearest token;
- `greedy_repetition_penalty`: greedy generate with a repetition penalty (transformers applies
  it without sampling too), and the smallest top-1/top-2 gap of its processed scores.
Float32 on CPU, one thread; byte-identical on rerun.
"""

import json
from importlib.metadata import version
from pathlib import Path

import torch
import transformers
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM
from transformers.generation.logits_process import (MinPLogitsWarper, RepetitionPenaltyLogitsProcessor,
                                                    TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper)

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURE = "llama_f32"
PROMPT = "Hello world"
OUTPUT = REPO_ROOT / "tests" / "goldens" / "sampling.json"

# Ties at the top, at the top-k cutoff (2.5) and below; negative scores for the penalty.
SCORES = [2.0, -1.5, 0.5, 3.25, 3.25, -0.75, 2.5, 0.0, -3.0, 2.5, 0.25, -0.5]
PENALTY_IDS = [3, 1, 3, 7, 2, 1]  # repeats are penalised once
PROCESSORS = [
    ("repetition_penalty", {"penalty": 1.5}, lambda: RepetitionPenaltyLogitsProcessor(1.5)),
    ("repetition_penalty", {"penalty": 0.8}, lambda: RepetitionPenaltyLogitsProcessor(0.8)),
    ("temperature", {"temperature": 0.7}, lambda: TemperatureLogitsWarper(0.7)),
    ("top_k", {"top_k": 3}, lambda: TopKLogitsWarper(3)),
    ("top_p", {"top_p": 0.8}, lambda: TopPLogitsWarper(0.8)),
    ("top_p", {"top_p": 0.3}, lambda: TopPLogitsWarper(0.3)),
    ("min_p", {"min_p": 0.2}, lambda: MinPLogitsWarper(0.2)),
]

# Passed to generate as they are; transformers' defaults (top_k 50, top_p 1, ...) fill the rest.
SETTINGS = [
    ("temperature_0.7", {"temperature": 0.7}),
    ("top_p_0.8_repetition_1.3", {"temperature": 1.3, "top_k": 0, "top_p": 0.8, "repetition_penalty": 1.3}),
    ("top_k_40_min_p_0.05_repetition_0.8",
     {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repetition_penalty": 0.8}),
]
# Below 1 the penalty rewards repetition: here it changes the greedy tokens, and penalising only
# the prompt or only the generated ids would give other tokens again.
GREEDY_PENALTY = 0.5
GREEDY_TOKENS = 8
# canrun's logits for the prompt differ from transformers' by up to 1e-4: every cutoff must be
# clear of the nearest token by more than that moves it.
MIN_CUTOFF_MARGIN = 5e-4


def scores_list(tensor):
    """float32 values in their shortest round-trip form; -inf (a removed token) as null."""
    return [None if v == float("-inf") else float(str(v)) for v in tensor.numpy()]


def processor_cases():
    cases = []
    scores = torch.tensor([SCORES], dtype=torch.float32)
    ids = torch.tensor([PENALTY_IDS])
    for name, params, make in PROCESSORS:
        out = make()(ids, scores.clone())[0]
        case = {"name": name, **params, "scores": SCORES, "expected": scores_list(out)}
        if name == "repetition_penalty":
            case["ids"] = PENALTY_IDS
        cases.append(case)
    return cases


def cutoff_margin(params, penalised):
    """How far (in probability, or in score for top-k) the nearest token is from each cutoff the
    setting applies, recomputed in float64 from transformers' own intermediate scores."""
    margins = {}
    scores = penalised.double()
    if params.get("temperature", 1.0) != 1.0:
        scores = scores / params["temperature"]
    top_k = params.get("top_k", 50)
    if top_k:
        ordered = scores.sort(descending=True).values
        margins["top_k"] = float(ordered[top_k - 1] - ordered[top_k])
        scores = scores.masked_fill(scores < ordered[top_k - 1], float("-inf"))
    top_p = params.get("top_p", 1.0)
    if top_p < 1.0:
        cumulative = scores.sort().values.softmax(-1).cumsum(-1)
        margins["top_p"] = float((cumulative - (1 - top_p)).abs().min())
        keep = cumulative > 1 - top_p
        keep[-1] = True
        sorted_scores, order = scores.sort()
        scores = scores.clone()
        scores[order[~keep]] = float("-inf")
    if "min_p" in params:
        ratio = scores.softmax(-1) / scores.softmax(-1).max()
        finite = ratio[ratio > 0]
        margins["min_p"] = float((finite - params["min_p"]).abs().min())
    return margins


def setting_cases(model, prompt_ids):
    captured = []
    build = model._get_logits_processor

    def capture(*args, **kwargs):
        processors = build(*args, **kwargs)
        captured.append([type(p).__name__ for p in processors])
        return processors

    model._get_logits_processor = capture
    input_ids = torch.tensor([prompt_ids])
    cases = []
    for name, params in SETTINGS:
        out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=1,
                             do_sample=True, return_dict_in_generate=True, output_scores=True,
                             output_logits=True, **params)
        raw, processed = out.logits[0][0], out.scores[0][0]
        penalised = raw
        if params.get("repetition_penalty", 1.0) != 1.0:
            penalised = RepetitionPenaltyLogitsProcessor(params["repetition_penalty"])(input_ids, raw[None].clone())[0]
        margins = cutoff_margin(params, penalised)
        assert min(margins.values()) > MIN_CUTOFF_MARGIN, (name, margins)
        probabilities = processed.softmax(-1)
        kept = (processed != float("-inf")).nonzero().flatten()
        cases.append({
            "name": name,
            "params": params,
            "processors": captured.pop(),
            "kept_ids": kept.tolist(),
            "probabilities": [float(str(p)) for p in probabilities[kept].numpy()],
            "cutoff_margins": margins,
        })
    model._get_logits_processor = build
    return cases, out.logits[0][0]


def greedy_case(model, prompt_ids):
    input_ids = torch.tensor([prompt_ids])
    out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=GREEDY_TOKENS,
                         do_sample=False, repetition_penalty=GREEDY_PENALTY, return_dict_in_generate=True,
                         output_scores=True)
    gaps = [float(step[0].topk(2).values[0] - step[0].topk(2).values[1]) for step in out.scores]
    plain = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=GREEDY_TOKENS,
                           do_sample=False)
    assert plain[0].tolist() != out.sequences[0].tolist(), "the penalty must change the greedy tokens"
    return {"repetition_penalty": GREEDY_PENALTY, "generated_ids": out.sequences[0, len(prompt_ids):].tolist(),
            "min_top2_gap": float(str(torch.tensor(min(gaps), dtype=torch.float32).numpy()))}


def main():
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    folder = REPO_ROOT / "tests" / "fixtures" / "models" / FIXTURE
    prompt_ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(PROMPT).ids
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        settings, logits = setting_cases(model, prompt_ids)
        greedy = greedy_case(model, prompt_ids)
    golden = {
        "transformers_version": version("transformers"),
        "torch_version": torch.__version__,
        "fixture": FIXTURE,
        "prompt": PROMPT,
        "prompt_ids": prompt_ids,
        "logits": scores_list(logits),
        "processors": processor_cases(),
        "settings": settings,
        "greedy_repetition_penalty": greedy,
    }
    lines = ["{"]
    for i, (key, value) in enumerate(golden.items()):
        end = "," if i + 1 < len(golden) else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n".join("    " + json.dumps(item) for item in value)
            lines.append(f"  {json.dumps(key)}: [\n{items}\n  ]{end}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{end}")
    OUTPUT.write_text("\n".join(lines) + "\n}\n")
    print(f"wrote {OUTPUT.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
