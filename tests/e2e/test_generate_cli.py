"""`canrun generate` end to end: tokenization + generation against the transformers
goldens of the committed tiny checkpoints, and the errors a user meets."""
import json
import shutil

import pytest

from conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"
GOLDENS = REPO_ROOT / "tests" / "goldens" / "models"
GOLDEN_NAMES = sorted(p.stem for p in GOLDENS.glob("*.json"))


def test_goldens_exist():
    assert len(GOLDEN_NAMES) >= 10


@pytest.mark.parametrize("backend", ["ref", "cpu"])
@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_generate_matches_transformers(run_canrun, name, backend):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    eos = json.loads((FIXTURES / name / "generation_config.json").read_text())["eos_token_id"]
    eos_ids = eos if isinstance(eos, list) else [eos]
    for case in golden["cases"]:
        result = run_canrun("generate", FIXTURES / name, "--prompt", case["prompt"],
                            "--max-new-tokens", 32, "--json", "--backend", backend)
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert out["backend"] == backend
        assert out["prompt_ids"] == case["prompt_ids"], case["prompt"]
        assert out["generated_ids"] == case["generated_ids"], case["prompt"]
        # The 32nd token can be an eos id too (qwen3_5_moe_text's third prompt).
        generated = case["generated_ids"]
        assert out["stopped_at_eos"] == (len(generated) < 32 or generated[-1] in eos_ids)


def test_the_compiled_cpu_backend_is_the_default(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "Hello world", "-n", "4", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["backend"] == "cpu" and out["plan"]["buckets"] == [16]
    reference = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "Hello world", "-n", "4", "--json",
                           "--backend", "ref")
    assert json.loads(reference.stdout)["plan"] is None
    assert json.loads(reference.stdout)["generated_ids"] == out["generated_ids"]


def test_plain_output_has_text_and_timing_line(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "Once upon a time",
                        "--max-new-tokens", 8)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    timing = result.stderr.strip().splitlines()[-1]
    for part in ("load", "prefill", "decode", "tok/s", "peak RSS"):
        assert part in timing


def test_missing_folder(run_canrun, tmp_path):
    result = run_canrun("generate", tmp_path / "nope", "--prompt", "hi")
    assert result.returncode != 0
    assert "nope" in result.stderr and "not a folder" in result.stderr


def test_needs_a_prompt(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32")
    assert result.returncode == 2
    assert "--prompt" in result.stderr


def test_unknown_backend(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "hi", "--backend", "cuda")
    assert result.returncode == 2
    assert "--backend" in result.stderr and "cuda" in result.stderr


def test_prompt_longer_than_cache(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "a b c d e f g h",
                        "--max-new-tokens", 4, "--cache-tokens", 6)
    assert result.returncode == 2
    assert "KV cache of 6" in result.stderr


@pytest.mark.parametrize("kv_dtype", ["bf16", "f16"])
def test_a_16_bit_kv_cache_takes_half_the_bytes(run_canrun, kv_dtype):
    outputs = {}
    for dtype in ("f32", kv_dtype):
        result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "Hello world", "-n", "4", "--json",
                            "--kv-dtype", dtype)
        assert result.returncode == 0, result.stderr
        outputs[dtype] = json.loads(result.stdout)
    assert outputs[kv_dtype]["kv_cache_bytes"] * 2 == outputs["f32"]["kv_cache_bytes"]


def test_unknown_kv_dtype(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "hi", "--kv-dtype", "f8")
    assert result.returncode == 2
    assert "--kv-dtype" in result.stderr and "f8" in result.stderr


def test_negative_token_count_is_rejected(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", "hi", "--max-new-tokens", -1)
    assert result.returncode != 0
    assert "max-new-tokens" in result.stderr


def _broken_copy(tmp_path, edit):
    target = tmp_path / "model"
    shutil.copytree(FIXTURES / "llama_f32", target)
    edit(target)
    return target


def test_unknown_architecture(run_canrun, tmp_path):
    # Without "architectures": with it, a class canrun implements would load the folder.
    def edit(folder):
        config = json.loads((folder / "config.json").read_text())
        config["model_type"] = "frobnicator"
        config.pop("architectures", None)
        (folder / "config.json").write_text(json.dumps(config))
    result = run_canrun("generate", _broken_copy(tmp_path, edit), "--prompt", "hi")
    assert result.returncode == 1
    assert "UNSUPPORTED_ARCHITECTURE: frobnicator" in result.stderr


def test_malformed_tokenizer(run_canrun, tmp_path):
    model = _broken_copy(tmp_path, lambda f: (f / "tokenizer.json").write_text("{\"model\": 3"))
    result = run_canrun("generate", model, "--prompt", "hi")
    assert result.returncode == 1
    assert "tokenizer.json" in result.stderr
    assert result.stderr.count("\n") == 1


def test_truncated_weights(run_canrun, tmp_path):
    def edit(folder):
        data = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(data[: len(data) // 3])
    result = run_canrun("generate", _broken_copy(tmp_path, edit), "--prompt", "hi")
    assert result.returncode == 1
    assert "model.safetensors" in result.stderr


def _gptq_copy(tmp_path, edit):
    """The GPTQ fixture with one tensor of layer 0's q_proj changed by `edit(tensors)`."""
    from safetensors.numpy import load_file, save_file
    target = tmp_path / "gptq"
    shutil.copytree(FIXTURES / "llama_gptq_int4", target)
    tensors = load_file(target / "model.safetensors")
    edit(tensors)
    save_file(tensors, target / "model.safetensors", metadata={"format": "pt"})
    return target


@pytest.mark.parametrize("tensor, edit, words", [
    # A zero point of 6 in the v1 layout (stored 5): asymmetric weights.
    ("qzeros", lambda t: t.__setitem__((0, 0), t[0, 0] - 2), "holds 5 for group 0, output 0: canrun reads "
                                                              "symmetric GPTQ weights (every stored zero point 7)"),
    # Inputs 0 and 32 trade groups: desc_act's permutation.
    ("g_idx", lambda t: t.__setitem__(slice(0, 33, 32), t[[32, 0]]), "puts input 0 in group 1: canrun reads "
                                                                        "GPTQ inputs in order (no desc_act)"),
])
def test_gptq_tensors_canrun_cannot_run_are_named(run_canrun, tmp_path, tensor, edit, words):
    name = f"model.layers.0.self_attn.q_proj.{tensor}"
    model = _gptq_copy(tmp_path, lambda tensors: edit(tensors[name]))
    result = run_canrun("generate", model, "--prompt", "hi")
    assert result.returncode != 0
    assert f"tensor '{name}' in " in result.stderr and words in result.stderr, result.stderr
