"""`canrun check/sweep --runner torch`: run.py on PyTorch/Transformers (the interpreter in
$CANRUN_TORCH_PYTHON, which scripts/test.sh makes from tests/requirements-torch.txt) gives rows
in the stack's own version pair. Eager and inductor on a tiny fixture, and eager on the real
SmolLM2 folder, agree with canrun's tokens, and so does an image-text-to-text model asked about the
check image (a real folder and synthetic weights); a row's reproduce script runs as printed;
a device torch lacks is a FAIL_RUNTIME row with torch's message; output without a result is a
FAIL_RUNTIME naming what was missing; a torch sweep and a canrun sweep side by side compare in
`canrun diff`."""
import json
import os
import pathlib
import stat
import subprocess
import urllib.parse

import pytest

from conftest import REPO_ROOT
from space import Space, entry, write_catalog

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"
SMOLLM2 = REPO_ROOT / "models" / "SmolLM2-135M-Instruct"
QWEN3_VL = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3_vl"


@pytest.fixture(scope="module")
def torch_python():
    python = os.environ.get("CANRUN_TORCH_PYTHON")
    if not python:
        pytest.skip("CANRUN_TORCH_PYTHON is not set (scripts/test.sh sets it from scripts/install_torch.sh)")
    return python


@pytest.fixture
def env(tmp_path, torch_python):
    return dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), HF_HUB_CACHE=str(tmp_path / "hub"),
                CANRUN_TORCH_PYTHON=torch_python)


def check(canrun_bin, env, *args, model=FIXTURE):
    result = subprocess.run([canrun_bin, "check", str(model), "--json", *args], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_eager_run_matches_canrun_and_the_reference(canrun_bin, env):
    row = check(canrun_bin, env, "--runner", "torch")
    assert row["result"] == "PASS", row["error_message"]
    assert row["verification"] == "exact"
    assert (row["compiler_version"], row["library_version"]) == ("torch-2.15.0+eager-cpu", "transformers-5.23.0")
    assert row["generated_token_ids"] == row["reference_token_ids"]
    assert row["compile_time_s"] is None and row["graph_breaks"] is None
    assert row["load_time_s"] > 0 and row["peak_host_memory_bytes"] > 0
    assert row["peak_device_memory_bytes"] is None
    stack = {entry["component"]: entry["version"] for entry in row["software_stack"]}
    assert stack["torch"].startswith("2.15.0") and stack["dtype"] == "float32"
    # The same checkpoint on canrun's own engine chooses the same tokens.
    assert check(canrun_bin, env)["generated_token_ids"] == row["generated_token_ids"]
    script = row["reproduce_script"]
    assert "pip install --quiet" in script and "torch==2.15.0" in script
    assert "PARAMETERS = {" in script and f"expected_tokens = {row['generated_token_ids']}" in script


def test_the_real_smollm2_folder_passes_on_torch_with_canruns_tokens(canrun_bin, env):
    if not SMOLLM2.is_dir():
        pytest.fail(f"{SMOLLM2} is missing: run tools/fetch_smollm2.sh (scripts/test.sh does)")
    row = check(canrun_bin, env, "--runner", "torch", model=SMOLLM2)
    assert (row["result"], row["verification"], row["weights"]) == ("PASS", "exact", "real"), row["error_message"]
    assert row["generated_token_ids"] == check(canrun_bin, env, model=SMOLLM2)["generated_token_ids"]


def test_the_reproduce_script_of_a_torch_row_runs_as_printed(canrun_bin, env, tmp_path, torch_python):
    """The script as printed, in a folder whose venv is the one that made the row, with pip kept off
    every index: its install step passes only if each pin is the version that venv holds, and fails
    on any other. (A fresh venv would install the pins again: 5.6 GB and 95 s, more disk than a CI
    machine has to spare after the builds.)"""
    row = check(canrun_bin, env, "--runner", "torch")
    folder = tmp_path / "reproduce"
    folder.mkdir()
    (folder / ".venv-canrun-torch").symlink_to(pathlib.Path(torch_python).parent.parent)
    offline = {key: value for key, value in env.items() if not key.startswith("PIP_")}
    offline.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")

    def reproduce(script):
        (folder / "reproduce.sh").write_text(script)
        return subprocess.run(["bash", "reproduce.sh"], cwd=folder, capture_output=True, text=True, timeout=600,
                              env=offline)

    result = reproduce(row["reproduce_script"])
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "tokens: the same as the row recorded" in result.stdout
    result = reproduce(row["reproduce_script"].replace("torch==2.15.0", "torch==2.14.0"))
    assert result.returncode != 0 and "torch==2.14.0" in result.stderr, result.stderr[-2000:]


def test_inductor_compiles_without_graph_breaks(canrun_bin, env):
    row = check(canrun_bin, env, "--runner", "torch", "--compile", "inductor")
    assert row["result"] == "PASS", row["error_message"]
    assert row["compiler_version"] == "torch-2.15.0+inductor-cpu"
    assert row["compile_time_s"] > 0
    assert row["graph_breaks"] == 0 and row["eager_fallback"] is False
    # torch._dynamo's own count (torch 2.15.0 recompiles the decode step once here).
    assert isinstance(row["recompilations"], int) and row["recompilations"] >= 0
    assert row["generated_token_ids"] == row["reference_token_ids"]


def test_a_device_torch_lacks_is_a_row_with_torchs_message(canrun_bin, env):
    row = check(canrun_bin, env, "--runner", "torch", "--device", "cuda")
    assert row["result"] == "FAIL_RUNTIME"
    assert row["compiler_version"] == "torch-2.15.0+eager-cuda"
    assert row["error_message"].startswith("device: ")
    assert "NVIDIA" in row["error_message"] or "CUDA" in row["error_message"]
    assert row["generated_token_ids"] is None and row["verification"] is None


def test_a_model_planned_on_two_cores_runs_on_two_torch_distributed_workers(canrun_bin, env, tmp_path):
    # The planner puts the qwen2 fixture on 2 of 4 cores of this profile (as in test_lab_check.py).
    profiles = tmp_path / "two-cores.json"
    profiles.write_text(json.dumps({"profiles": [{"name": "two", "cores": 4, "memory_per_core": "40.54 MiB"}]}))
    model = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen2"
    row = check(canrun_bin, env, "--runner", "torch", "--profiles", str(profiles), "--profile", "two", model=model)
    assert row["result"] == "PASS", row["error_message"]
    assert (row["cores"], row["tp_degree"]) == (2, 2)
    assert row["generated_token_ids"] == row["reference_token_ids"]
    assert '"cores": 2' in row["reproduce_script"]


def fake_python(tmp_path, torch_python, run_output):
    """An interpreter that answers the version probe as the real one does and prints
    `run_output` for run.py."""
    path = tmp_path / "fake-python"
    path.write_text("#!/usr/bin/env bash\n"
                    f"if [ \"$1\" = -c ]; then exec {torch_python} \"$@\"; fi\n"
                    f"printf '%s\\n' {json.dumps(run_output)}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize("output, named", [
    ("Segmentation fault? no result", "not JSON"),
    ('{"tokens": [1, 2]}', "'top_ids' is missing"),
    ('{"tokens": [1], "top_ids": [[1]], "reference_tokens": [1]}', "'reference_top_ids' is missing"),
])
def test_output_without_a_result_is_a_runtime_failure_naming_what_is_missing(canrun_bin, env, tmp_path,
                                                                               torch_python, output, named):
    row = check(canrun_bin, env, "--runner", "torch", "--python", fake_python(tmp_path, torch_python, output))
    assert row["result"] == "FAIL_RUNTIME"
    assert named in row["error_message"]


@pytest.mark.parametrize("args, named", [
    (["--runner", "tensorflow"], "--runner 'tensorflow'"),
    (["--runner", "torch", "--device", "tpu"], "--device"),
    (["--runner", "torch", "--compile", "xla"], "--compile"),
    (["--compile", "inductor"], "--compile needs --runner torch"),
    (["--runner", "torch", "--compile", "neuron"], "--device neuron"),
    (["--runner", "torch", "--python", "/nonexistent/python3"], "--python /nonexistent/python3"),
])
def test_bad_runner_options_are_usage_errors_naming_the_option(canrun_bin, env, args, named):
    for command in (["check", str(FIXTURE)], ["sweep", "--limit", "1"]):
        result = subprocess.run([canrun_bin, *command, *args], capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode != 0
        assert named in result.stderr, result.stderr


def test_torch_and_canrun_sweeps_side_by_side_in_diff(canrun_bin, env, tmp_path):
    out = tmp_path / "results"
    for runner in ("torch", "canrun"):
        result = subprocess.run([canrun_bin, "sweep", "--search", "SmolLM2-135M", "--limit", "1", "--runner", runner,
                                 "--out", str(out)], capture_output=True, text=True, env=env, timeout=600)
        assert result.returncode == 0, result.stderr
    names = sorted(path.name for path in out.glob("*.parquet"))
    assert len(names) == 2 and names[1] == "torch-2.15.0+eager-cpu__transformers-5.23.0.parquet", names
    torch_pair = names[1].removesuffix(".parquet")
    canrun_pair = names[0].removesuffix(".parquet")
    diff = subprocess.run([canrun_bin, "diff", "--data", str(out), "--from", canrun_pair, "--to", torch_pair, "--all"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert diff.returncode == 0, diff.stderr
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in diff.stdout
    assert "generated tokens agree on 1 of 1 compared" in diff.stdout
    # The Space lists both pairs and shows how the torch row was verified.
    space = Space(canrun_bin, out, REPO_ROOT / "data" / "catalog.jsonl")
    try:
        status, pairs, _ = space.get("/api/pairs")
        assert status == 200
        assert {f"{p['compiler']}__{p['library']}" for p in pairs["pairs"]} == {torch_pair, canrun_pair}
        compiler, library = torch_pair.split("__")
        query = urllib.parse.urlencode({"view": "tested", "compiler": compiler, "library": library})
        status, body, _ = space.get(f"/api/rows?{query}")
        assert status == 200
        [row] = body["rows"]
        assert (row["result"], row["verification"], row["eager_fallback"]) == ("PASS", "exact", None)
    finally:
        code, stderr = space.stop()
    assert code == 0, stderr


def test_an_image_text_to_text_model_on_torch_chooses_canruns_tokens(canrun_bin, env, tmp_path):
    """AutoModelForImageTextToText asked about the check image: a folder with its processor and chat
    template, and synthetic weights at its config, whose prompt run.py builds as canrun's check does."""
    row = check(canrun_bin, env, "--runner", "torch", model=QWEN3_VL)
    assert (row["task"], row["result"], row["verification"]) == ("image-text-to-text", "PASS", "exact"), \
        row["error_message"]
    assert row["generated_token_ids"] == check(canrun_bin, env, model=QWEN3_VL)["generated_token_ids"]
    assert "pillow==13.0.0" in row["reproduce_script"] and "torchvision==0.29.2" in row["reproduce_script"]
    catalog = tmp_path / "catalog.jsonl"
    config = json.loads((QWEN3_VL / "config.json").read_text())
    write_catalog(catalog, [entry("test/tiny-qwen3-vl", "qwen3_vl", config, 1, task="image-text-to-text")])
    out = tmp_path / "results"
    for runner in ("torch", "canrun"):
        result = subprocess.run([canrun_bin, "sweep", "--catalog", str(catalog), "--runner", runner, "--out", str(out)],
                                capture_output=True, text=True, env=env, timeout=600)
        assert result.returncode == 0, result.stderr
    canrun_pair, torch_pair = sorted(path.name.removesuffix(".parquet") for path in out.glob("*.parquet"))
    diff = subprocess.run([canrun_bin, "diff", "--data", str(out), "--from", canrun_pair, "--to", torch_pair, "--all"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert diff.returncode == 0, diff.stderr
    assert "generated tokens agree on 1 of 1 compared" in diff.stdout, diff.stdout


ENCODERS = REPO_ROOT / "tests" / "fixtures" / "encoders"


def test_encoders_on_torch_follow_canruns_verdicts_and_reproduce(canrun_bin, env, tmp_path, torch_python):
    """An embedding model (SentenceTransformer) and a cross-encoder (CrossEncoder) on torch eager:
    the same protocol as canrun's check, and the embedding row's reproduce script, run as printed
    with pip kept off every index, computes the same verdict again."""
    row = check(canrun_bin, env, "--runner", "torch", model=ENCODERS / "bert_mean")
    assert (row["result"], row["task"], row["verification"]) == ("PASS", "sentence-similarity", "cosine"), \
        row["error_message"]
    assert row["min_cosine"] >= 0.99999 and row["sentences_per_s"] > 0 and row["generated_token_ids"] is None
    assert row["compiler_version"] == "torch-2.15.0+eager-cpu" and row["prompt"].startswith("8 fixed sentences")
    stack = {entry["component"]: entry["version"] for entry in row["software_stack"]}
    assert stack["sentence_transformers"] == "6.3.0"
    assert "sentence-transformers==6.3.0" in row["reproduce_script"]
    ranking = check(canrun_bin, env, "--runner", "torch", model=ENCODERS / "bert_cross_encoder")
    assert (ranking["result"], ranking["task"], ranking["verification"]) == ("PASS", "text-ranking", "scores"), \
        ranking["error_message"]
    assert ranking["max_score_difference"] <= 1e-4 and ranking["min_cosine"] is None
    folder = tmp_path / "reproduce"
    folder.mkdir()
    (folder / ".venv-canrun-torch").symlink_to(pathlib.Path(torch_python).parent.parent)
    offline = {key: value for key, value in env.items() if not key.startswith("PIP_")}
    offline.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    (folder / "reproduce.sh").write_text(row["reproduce_script"])
    result = subprocess.run(["bash", "reproduce.sh"], cwd=folder, capture_output=True, text=True, timeout=600,
                            env=offline)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "min cosine" in result.stdout and ": PASS (the row: PASS)" in result.stdout, result.stdout
