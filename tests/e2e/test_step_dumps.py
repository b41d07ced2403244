"""Per-step activation dumps: `canrun generate --dump` against transformers' committed dump
(tests/goldens/dumps), and tools/compare_steps.py on small manifests written here, which need
no canrun binary."""
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from tokenizers import Tokenizer

from conftest import REPO_ROOT

COMPARE = REPO_ROOT / "tools" / "compare_steps.py"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"
REFERENCE = REPO_ROOT / "tests" / "goldens" / "dumps" / "llama_f32"
# The committed reference was made for the ids of this text (see tests/goldens/dumps/README.md).
PROMPT = "by the sea"


def compare(*args):
    return subprocess.run([sys.executable, str(COMPARE), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def last_line(result):
    return result.stdout.strip().splitlines()[-1]


def fail_lines(result):
    return [line for line in result.stdout.splitlines() if "  FAIL" in line]


# ---- canrun generate --dump against the committed transformers dump


@pytest.fixture(scope="module")
def canrun_dump(run_canrun, tmp_path_factory):
    folder = tmp_path_factory.mktemp("canrun") / "dump"
    result = run_canrun("generate", FIXTURE, "--prompt", PROMPT, "-n", 1, "--backend", "ref", "--dump", folder)
    assert result.returncode == 0, result.stderr
    return folder


def test_canrun_dump_agrees_with_transformers(canrun_dump):
    manifest = json.loads((canrun_dump / "manifest.json").read_text())
    assert manifest["format"] == "canrun-dump-1"
    assert manifest["prompt_ids"] == json.loads((REFERENCE / "manifest.json").read_text())["prompt_ids"]
    result = compare(canrun_dump, REFERENCE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "compared steps agree" in last_line(result)
    assert fail_lines(result) == []


def test_canrun_dump_of_chosen_steps_on_the_compiled_backend(run_canrun, tmp_path):
    folder = tmp_path / "dump"
    result = run_canrun("generate", FIXTURE, "--prompt", PROMPT, "-n", 1, "--dump", folder,
                        "--dump-steps", "q_proj,layers.1.mlp_residual", "--cache-dir", tmp_path / "plans")
    assert result.returncode == 0, result.stderr
    entries = json.loads((folder / "manifest.json").read_text())["entries"]
    assert [e["step"] for e in entries] == ["layers.0.q_proj", "layers.1.q_proj", "layers.1.mlp_residual"]
    assert json.loads((folder / "manifest.json").read_text())["backend"] == "cpu"
    for entry in entries:
        assert np.load(folder / entry["file"]).shape == tuple(entry["shape"]) == (5, 64)
    # The compiled backend agrees with transformers on them too.
    result = compare(folder, REFERENCE)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("args, words", [
    (["--dump-steps", "q_proj"], "--dump-steps needs --dump DIR"),
    (["--dump", "{tmp}/d", "--dump-steps", "q_porj"], "--dump-steps: 'q_porj' is no step of this model (steps: embed,"),
    (["--dump", "{tmp}/d", "--cores", "2"], "--dump: dumps are written by one process (--cores 1)"),
])
def test_bad_dump_options_are_usage_errors(run_canrun, tmp_path, args, words):
    result = run_canrun("generate", FIXTURE, "--prompt", PROMPT, "-n", 1, "--backend", "ref",
                        *[a.format(tmp=tmp_path) for a in args])
    assert result.returncode == 2, result.stderr
    assert words in result.stderr


def test_canrun_perturbed_step_is_the_first_difference(canrun_dump, tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(canrun_dump, dump)
    entries = json.loads((dump / "manifest.json").read_text())["entries"]
    entry = next(e for e in entries if e["step"] == "layers.1.q_proj")
    values = np.load(dump / entry["file"])
    np.save(dump / entry["file"], values + np.float32(0.1))
    result = compare(dump, REFERENCE)
    assert result.returncode == 1, result.stdout + result.stderr
    assert last_line(result).startswith(
        f"first difference: step layers.1.q_proj ({entry['module']} {entry['capture']}), max abs diff 1.0e-01 >")
    assert len(fail_lines(result)) == 1


# ---- the committed reference


def test_reference_is_for_the_prompt_text():
    manifest = json.loads((REFERENCE / "manifest.json").read_text())
    ids = Tokenizer.from_file(str(FIXTURE / "tokenizer.json")).encode(PROMPT).ids
    assert manifest["format"] == "transformers-dump-1"
    assert manifest["prompt_ids"] == ids
    for entry in manifest["entries"]:
        array = np.load(REFERENCE / entry["file"])
        assert array.dtype == np.float32 and list(array.shape) == entry["shape"], entry["file"]
        assert array.shape[0] == len(ids), entry["file"]


def test_reference_agrees_with_itself(tmp_path):
    """A canrun-format copy of the reference's own tensors (rows last for lm_head, as canrun
    computes it) agrees: the reference is complete and compare_steps reads it."""
    reference = json.loads((REFERENCE / "manifest.json").read_text())
    steps = []
    for entry in reference["entries"]:
        rows = "last" if entry["module"] == "lm_head" else "all"
        values = np.load(REFERENCE / entry["file"])
        steps.append((entry["module"] + "." + entry["capture"], entry["module"], entry["capture"],
                      values[-1:] if rows == "last" else values, rows, None))
    write_canrun(tmp_path / "canrun", steps, reference["prompt_ids"])
    result = compare(tmp_path / "canrun", REFERENCE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert last_line(result) == f"all {len(steps)} compared steps agree (0 steps had no transformers counterpart)"


# ---- compare_steps.py on synthetic manifests

PROMPT_IDS = [1, 5, 7]
RNG = np.random.default_rng(7)
HIDDEN = RNG.standard_normal((3, 8)).astype(np.float32)
QKV = RNG.standard_normal((3, 12)).astype(np.float32)
LOGITS = RNG.standard_normal((3, 20)).astype(np.float32)


def write_canrun(folder, steps, prompt_ids=PROMPT_IDS, indices=None):
    """steps: (step, module, capture, values, rows, columns); indices: their index fields."""
    folder.mkdir(parents=True)
    entries = []
    for position, (step, module, capture, values, rows, columns) in enumerate(steps):
        index = position if indices is None else indices[position]
        file = f"{index:04d}_{step}.npy"
        np.save(folder / file, np.asarray(values, dtype=np.float32))
        entries.append({"index": index, "step": step, "kind": "test", "file": file, "shape": list(values.shape),
                        "module": module, "capture": capture, "rows": rows, "columns": columns})
    manifest = {"format": "canrun-dump-1", "model": "synthetic", "backend": "ref", "prompt_ids": prompt_ids,
                "entries": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def write_transformers(folder, tensors, prompt_ids=PROMPT_IDS, missing=(), skipped=()):
    """tensors: {(module, capture): [seq, width] array}."""
    folder.mkdir(parents=True)
    entries = []
    for index, ((module, capture), values) in enumerate(tensors.items()):
        file = f"{index:04d}_{module}.{capture}.npy"
        np.save(folder / file, values)
        entries.append({"module": module, "capture": capture, "file": file, "shape": list(values.shape), "calls": 1})
    manifest = {"format": "transformers-dump-1", "transformers": "test", "torch": "test", "model": "synthetic",
                "prompt_ids": prompt_ids, "entries": entries, "missing": list(missing), "skipped": list(skipped)}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.fixture
def reference(tmp_path):
    return write_transformers(tmp_path / "transformers", {
        ("model.layers.0", "input"): HIDDEN,
        ("model.layers.0.self_attn.qkv_proj", "output"): QKV,
        ("lm_head", "output"): LOGITS,
    })


def test_compare_agrees_and_counts_steps_without_counterpart(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [
        ("embed", "model.layers.0", "input", HIDDEN + 1e-6, "all", None),
        ("layers.0.rotary_cache_write", None, None, np.zeros((3, 4)), "all", None),
        ("lm_head", "lm_head", "output", LOGITS[-1:], "last", None),
    ])
    result = compare(canrun, reference)
    assert result.returncode == 0, result.stdout + result.stderr
    assert last_line(result) == "all 2 compared steps agree (1 step had no transformers counterpart)"
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 4  # header, two compared steps, summary
    assert "rotary" not in result.stdout
    assert lines[1].split()[:3] == ["0", "embed", "model.layers.0"] and lines[1].endswith("ok")


def test_compare_rows_last_is_the_last_row(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [("lm_head", "lm_head", "output", LOGITS[:1], "last", None)])
    result = compare(canrun, reference)
    assert result.returncode == 1
    assert last_line(result).startswith("first difference: step lm_head (lm_head output), max abs diff")


def test_compare_columns_cut_a_fused_projection(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [
        ("layers.0.q_proj", "model.layers.0.self_attn.qkv_proj", "output", QKV[:, 0:8], "all", [0, 8]),
        ("layers.0.k_proj", "model.layers.0.self_attn.qkv_proj", "output", QKV[:, 8:10], "all", [8, 10]),
        ("layers.0.v_proj", "model.layers.0.self_attn.qkv_proj", "output", QKV[:, 8:10], "all", [10, 12]),
    ])
    result = compare(canrun, reference)
    assert result.returncode == 1
    assert last_line(result).startswith("first difference: step layers.0.v_proj (")
    assert len(fail_lines(result)) == 1


def test_compare_columns_past_the_width_are_a_difference(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [
        ("layers.0.v_proj", "model.layers.0.self_attn.qkv_proj", "output", QKV[:, 10:12], "all", [10, 14]),
    ])
    result = compare(canrun, reference)
    assert result.returncode == 1
    assert "columns [10, 14] reach past transformers' width 12" in last_line(result)


def test_compare_shape_mismatch_is_a_difference_naming_both_shapes(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [
        ("embed", "model.layers.0", "input", HIDDEN, "all", None),
        ("layers.0.qkv", "model.layers.0.self_attn.qkv_proj", "output", QKV[:, :10], "all", None),
    ])
    result = compare(canrun, reference)
    assert result.returncode == 1
    assert last_line(result) == ("first difference: step layers.0.qkv (model.layers.0.self_attn.qkv_proj output), "
                                 "canrun shape [3, 10] != transformers shape [3, 12]")


def test_compare_walks_steps_in_index_order(tmp_path, reference):
    bad_hidden, bad_logits = HIDDEN + 1, LOGITS[-1:] + 1
    canrun = write_canrun(tmp_path / "canrun", [
        ("lm_head", "lm_head", "output", bad_logits, "last", None),
        ("embed", "model.layers.0", "input", bad_hidden, "all", None),
    ], indices=[5, 2])
    result = compare(canrun, reference)
    assert result.returncode == 1
    assert last_line(result).startswith("first difference: step embed (model.layers.0 input), max abs diff 1.0e+00")
    assert [line.split()[0] for line in fail_lines(result)] == ["2", "5"]


def test_compare_tolerance_is_atol_plus_rtol_times_max_reference(tmp_path, reference):
    tolerance = 1e-4 + 1e-4 * float(np.max(np.abs(HIDDEN)))
    under = write_canrun(tmp_path / "under", [("embed", "model.layers.0", "input", HIDDEN + 0.9 * tolerance,
                                               "all", None)])
    over = write_canrun(tmp_path / "over", [("embed", "model.layers.0", "input", HIDDEN + 1.1 * tolerance,
                                             "all", None)])
    assert compare(under, reference).returncode == 0
    result = compare(over, reference)
    assert result.returncode == 1
    assert last_line(result).endswith(f"> tolerance {tolerance:.1e}")
    assert compare(over, reference, "--atol", 1e-3).returncode == 0


def test_compare_nan_is_a_difference(tmp_path, reference):
    values = HIDDEN.copy()
    values[1, 2] = np.nan
    canrun = write_canrun(tmp_path / "canrun", [("embed", "model.layers.0", "input", values, "all", None)])
    assert compare(canrun, reference).returncode == 1


def test_compare_json(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [
        ("embed", "model.layers.0", "input", HIDDEN, "all", None),
        ("layers.0.rotary_cache_write", None, None, np.zeros((3, 4)), "all", None),
        ("lm_head", "lm_head", "output", LOGITS[-1:] + 0.5, "last", None),
    ])
    result = compare(canrun, reference, "--json")
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert out["compared"] == 2 and out["failed"] == 1
    assert out["no_counterpart"] == ["layers.0.rotary_cache_write"]
    assert out["first_difference"]["step"] == "lm_head"
    assert out["first_difference"]["max_abs_diff"] == pytest.approx(0.5, rel=1e-6)
    assert [s["status"] for s in out["steps"]] == ["ok", "FAIL"]


def test_compare_step_the_reference_lacks_is_bad_input(tmp_path):
    reference = write_transformers(tmp_path / "transformers", {("model.layers.0", "input"): HIDDEN},
                                   missing=["model.layers.0.mlp"])
    canrun = write_canrun(tmp_path / "canrun", [
        ("embed", "model.layers.0", "input", HIDDEN, "all", None),
        ("layers.0.mlp", "model.layers.0.mlp", "output", HIDDEN, "all", None),
    ])
    result = compare(canrun, reference)
    assert result.returncode == 2
    assert last_line(result).startswith(
        "1 canrun step has no transformers tensor, the first step layers.0.mlp (model.layers.0.mlp output): "
        "the model has no such module")


def one_line_error(result):
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_compare_missing_folder(tmp_path, reference):
    result = compare(tmp_path / "nope", reference)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{tmp_path / 'nope'}: not a folder" in one_line_error(result)


def test_compare_missing_manifest(tmp_path, reference):
    (tmp_path / "empty").mkdir()
    result = compare(tmp_path / "empty", reference)
    assert result.returncode == 2
    assert "manifest.json: cannot read" in one_line_error(result)


def test_compare_wrong_format_field(tmp_path, reference):
    result = compare(reference, reference)
    assert result.returncode == 2
    assert "field format is 'transformers-dump-1', expected 'canrun-dump-1'" in one_line_error(result)


def test_compare_different_prompt_ids(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [("embed", "model.layers.0", "input", HIDDEN, "all", None)],
                          prompt_ids=[1, 5, 8])
    result = compare(canrun, reference)
    assert result.returncode == 2
    assert "prompt ids differ" in one_line_error(result)


def test_compare_bad_rows_field(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [("embed", "model.layers.0", "input", HIDDEN, "first", None)])
    result = compare(canrun, reference)
    assert result.returncode == 2
    assert "(step 'embed'): field rows must be" in one_line_error(result)


def test_compare_npy_shape_not_the_manifest_shape(tmp_path, reference):
    canrun = write_canrun(tmp_path / "canrun", [("embed", "model.layers.0", "input", HIDDEN, "all", None)])
    np.save(canrun / "0000_embed.npy", HIDDEN[:2])
    result = compare(canrun, reference)
    assert result.returncode == 2
    assert "0000_embed.npy: holds shape [2, 8]" in one_line_error(result)
