"""`canrun generate --chat`: the folder's chat template rendered (the renderer's parity with
transformers is tests/unit/chat_template_parity_test.cpp), encoded as apply_chat_template encodes
it (no special tokens added), the answer streamed, and bad conversations refused with the entry
or the template's own message."""
import json

import pytest
from tokenizers import Tokenizer

from conftest import REPO_ROOT

MODEL = REPO_ROOT / "models" / "SmolLM2-135M-Instruct"
QUESTION = "What is the capital of France?"
# SmolLM2-135M-Instruct's chat_template.jinja for a lone user message, with the generation prompt.
RENDERED = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            f"<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n")


@pytest.fixture(scope="module")
def model():
    if not MODEL.is_dir():
        pytest.fail(f"{MODEL} is missing: run tools/fetch_smollm2.sh (scripts/test.sh does)")
    return MODEL


def test_chat_answers_and_streams_what_json_reports(run_canrun, model):
    streamed = run_canrun("generate", model, "--chat", "--user", QUESTION, "-n", 24)
    assert streamed.returncode == 0, streamed.stderr
    assert "Paris" in streamed.stdout
    result = run_canrun("generate", model, "--user", QUESTION, "-n", 24, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["prompt"] == RENDERED
    assert out["chat_template"].endswith("chat_template.jinja")
    tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    assert out["prompt_ids"] == tokenizer.encode(RENDERED, add_special_tokens=False).ids
    assert streamed.stdout == out["text"] + "\n"


def test_a_sampled_chat_repeats_with_its_seed(run_canrun, model):
    runs = [run_canrun("generate", model, "--user", QUESTION, "--temperature", 0.7, "--seed", 1, "-n", 24, "--json")
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = (json.loads(run.stdout) for run in runs)
    assert first["seed"] == second["seed"] == 1
    assert first["generated_ids"] == second["generated_ids"]


def test_messages_file_with_a_prefill_is_continued(run_canrun, model, tmp_path):
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps([
        {"role": "system", "content": "You answer in one sentence."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "The capital of France is"},
    ]))
    result = run_canrun("generate", model, "--messages", messages, "-n", 4, "--json")
    assert result.returncode == 0, result.stderr
    prompt = json.loads(result.stdout)["prompt"]
    assert prompt.startswith("<|im_start|>system\nYou answer in one sentence.<|im_end|>\n")
    assert prompt.endswith(f"{QUESTION}<|im_end|>\n<|im_start|>assistant\nThe capital of France is")


@pytest.mark.parametrize("content, message", [
    ('{"role": "user", "content": "hi"}', "expected a JSON list"),
    ('[{"role": "user", "content": "hi"}, 7]', "entry 1: expected an object"),
    ('[{"role": "user", "content": {"text": "hi"}}]', 'entry 0 (user): "content" must be a string'),
])
def test_bad_messages_files_name_the_entry(run_canrun, model, tmp_path, content, message):
    messages = tmp_path / "messages.json"
    messages.write_text(content)
    result = run_canrun("generate", model, "--messages", messages)
    assert result.returncode == 2
    assert str(messages) in result.stderr and message in result.stderr


def test_a_raising_template_prints_its_own_message(run_canrun, model, tmp_path):
    folder = tmp_path / "strict-model"
    folder.mkdir()
    for file in model.iterdir():
        if file.name != "chat_template.jinja":
            (folder / file.name).symlink_to(file)
    (folder / "chat_template.jinja").write_text(
        "{% if messages[0]['role'] != 'system' %}{{ raise_exception('A system message must come first.') }}{% endif %}")
    result = run_canrun("generate", folder, "--user", QUESTION)
    assert result.returncode == 2
    assert "A system message must come first." in result.stderr
    (folder / "chat_template.jinja").unlink()
    missing = run_canrun("generate", folder, "--user", QUESTION)
    assert missing.returncode == 1
    assert "no chat template" in missing.stderr


@pytest.mark.parametrize("args, message", [
    (["--system", "be brief", "--prompt", "x"], "--system"),
    (["--system", "be brief"], "--user"),
    (["--chat"], "--user"),
    (["--user", "a", "--prompt", "b"], "--user"),
])
def test_chat_options_that_do_not_fit_together_are_usage_errors(run_canrun, model, args, message):
    result = run_canrun("generate", model, *args)
    assert result.returncode == 2
    assert message in result.stderr
