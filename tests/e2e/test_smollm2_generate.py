"""The real model: canrun's greedy tokens on the SmolLM2-135M-Instruct folder equal
transformers' (goldens from tools/make_smollm2_goldens.py, transformers 5.23.0 /
torch 2.15.0, recorded in the golden file), and the text is readable English."""
import json
import re

import pytest

from conftest import REPO_ROOT

MODEL = REPO_ROOT / "models" / "SmolLM2-135M-Instruct"
GOLDEN = json.loads((REPO_ROOT / "tests" / "goldens" / "smollm2.json").read_text())
COMMON_WORDS = {"the", "a", "is", "of", "and", "to", "in", "was", "with", "its", "as", "by"}


@pytest.fixture(scope="module")
def outputs(run_canrun):
    if not MODEL.is_dir():
        pytest.fail(f"{MODEL} is missing: run tools/fetch_smollm2.sh (scripts/test.sh does)")
    results = {}
    for case in GOLDEN["prompts"]:
        result = run_canrun("generate", MODEL, "--prompt", case["text"], "--max-new-tokens", 32,
                            "--json", "--top-logits", 20)
        assert result.returncode == 0, result.stderr
        results[case["name"]] = json.loads(result.stdout)
    return results


@pytest.mark.parametrize("case", GOLDEN["prompts"], ids=lambda c: c["name"])
def test_tokens_equal_transformers(outputs, case):
    out = outputs[case["name"]]
    assert out["prompt_ids"] == case["prompt_ids"]
    assert out["generated_ids"] == case["generated_ids"]
    assert out["stopped_at_eos"] == case["stopped_at_eos"]
    assert out["text"] == case["generated_text"]


@pytest.mark.parametrize("case", GOLDEN["prompts"], ids=lambda c: c["name"])
def test_prompt_logits_close_to_transformers(outputs, case):
    expected = case["last_prompt_logits"]
    got = outputs[case["name"]]["prompt_top_logits"]
    assert [entry["id"] for entry in got[:5]] == expected["top_ids"][:5]
    by_id = {entry["id"]: entry["logit"] for entry in got}
    for token_id, value in zip(expected["top_ids"], expected["top_values"]):
        if token_id in by_id:
            assert abs(by_id[token_id] - value) < 2e-3, token_id


def test_story_is_readable_english(outputs):
    text = outputs["story"]["text"]
    words = re.findall(r"[A-Za-z']+", text.lower())
    assert len(words) >= 15
    assert sum(ch.isascii() for ch in text) / len(text) > 0.95
    assert len(COMMON_WORDS & set(words)) >= 3, text


def test_prompt_lookup_generates_the_same_tokens_faster_per_pass(run_canrun):
    # A chat that asks for code back: the answer repeats the prompt's lines, which prompt lookup drafts.
    code = ("def average(values):\n    total = 0\n    count = 0\n    for value in values:\n"
            "        total += value\n        count += 1\n    if count == 0:\n        return 0\n"
            "    return total / count\n")
    user = "Rename the variable total to sum in this Python function and return the whole function.\n\n" + code
    runs = {}
    for lookup in ("0", "5"):
        result = run_canrun("generate", MODEL, "--user", user, "--max-new-tokens", 96, "--greedy", "--json",
                            "--prompt-lookup", lookup)
        assert result.returncode == 0, result.stderr
        runs[lookup] = json.loads(result.stdout)
    assert runs["5"]["generated_ids"] == runs["0"]["generated_ids"]
    assert runs["0"]["prompt_lookup"] is None
    lookup = runs["5"]["prompt_lookup"]
    assert lookup["accepted_tokens"] >= 10 and lookup["drafted_tokens"] >= lookup["accepted_tokens"]
