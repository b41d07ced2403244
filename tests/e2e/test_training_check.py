"""`canrun check --runner torch --workload train`: the training check. On the tiny llama fixture
it fine-tunes in float32 (every loss equal to the reference's, the restart bit-identical, canrun's
own step-0 loss within 1e-4 of torch's), in bfloat16 autocast (within the bf16 tolerances), with
LoRA adapters and under torch.compile; a deliberately broken backward pass is a FAIL_RUNTIME
naming the stage; a device torch lacks fails by name; the real SmolLM2 folder trains and its
curve falls; a sweep trains synthetic weights and resumes. Training rows live beside
the generation rows of the same pair (the workload column), the Space serves them, `canrun
report` compares two of them, and a row's reproduce script runs as printed."""
import json
import pathlib
import subprocess
import urllib.parse

import pyarrow.parquet as pq
import pytest

from conftest import REPO_ROOT
from space import Space, entry, write_catalog
from test_torch_runner import FIXTURE, SMOLLM2, env, torch_python  # noqa: F401  (fixtures)

STEPS = ["--steps", "4"]


def train(canrun_bin, env, *args, model=FIXTURE, extra_env=None):
    result = subprocess.run([canrun_bin, "check", str(model), "--json", "--runner", "torch", "--workload", "train",
                             *args], capture_output=True, text=True, env=dict(env, **(extra_env or {})), timeout=900)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def stack(row):
    return {entry["component"]: entry["version"] for entry in row["software_stack"]}


def test_float32_training_equals_the_reference_restarts_bit_identical_and_agrees_with_canrun(canrun_bin, env):
    row = train(canrun_bin, env, *STEPS)
    assert (row["result"], row["workload"], row["verification"]) == ("PASS", "train", "losses"), row["error_message"]
    assert row["compiler_version"] == "torch-2.15.0+eager-cpu"
    assert row["train_steps"] == 4 and len(row["train_losses"]) == 4 and len(row["step_times_s"]) == 4
    assert row["train_losses"] == row["reference_losses"] and row["grad_norms"] == row["reference_grad_norms"]
    assert (row["restart_step"], row["restart_check"]) == (2, "bit-identical")
    assert row["first_step_outside"] is None and row["loss_tolerance"] == 1e-3
    # canrun's ref backend computes step 0's loss from the same batch, independently of torch.
    assert abs(row["native_step0_loss"] - row["reference_losses"][0]) <= 1e-4 * row["reference_losses"][0]
    assert row["first_step_time_s"] > 0 and 0 < row["step_time_p50_s"] <= row["step_time_p95_s"]
    assert row["train_tokens_per_s"] > 0 and row["peak_host_memory_bytes"] > 0
    assert row["generated_token_ids"] is None and row["compile_time_s"] is None
    assert "full fine-tuning" in stack(row)["training"] and stack(row)["dtype"] == "float32"
    assert "--workload train --steps 4" in row["run_command"]
    assert "instruction examples of data/train_instructions.jsonl" in row["prompt"]


def test_torch_compile_trains_with_the_compile_apart(canrun_bin, env):
    row = train(canrun_bin, env, "--steps", "2", "--compile", "inductor")
    assert row["result"] == "PASS", row["error_message"]
    assert row["compiler_version"] == "torch-2.15.0+inductor-cpu"
    assert row["compile_time_s"] > 0 and row["first_step_time_s"] > row["step_time_p50_s"]


def test_a_broken_backward_is_a_failure_naming_the_stage(canrun_bin, env):
    row = train(canrun_bin, env, *STEPS, extra_env={"CANRUN_TRAIN_FAULT": "backward"})
    assert (row["result"], row["error_type"]) == ("FAIL_RUNTIME", "RuntimeError")
    assert row["error_message"].startswith("backward: backward broken on purpose"), row["error_message"]
    assert row["train_losses"] is None and "expected_error = \"backward\"" in row["reproduce_script"]


def test_the_cuda_and_neuron_paths_run_here_up_to_their_device(canrun_bin, env):
    """The same run.py on this machine: cuda fails in the device stage with torch's message, neuron
    at importing torch_neuronx, which registers its device and compile backend."""
    row = train(canrun_bin, env, *STEPS, "--device", "cuda")
    assert row["result"] == "FAIL_RUNTIME" and row["compiler_version"] == "torch-2.15.0+eager-cuda"
    assert row["error_message"].startswith("device: ")
    assert "NVIDIA" in row["error_message"] or "CUDA" in row["error_message"]
    row = train(canrun_bin, env, *STEPS, "--device", "neuron", "--compile", "neuron")
    assert row["result"] == "FAIL_RUNTIME" and row["compiler_version"] == "torch-2.15.0+neuron-neuron"
    assert row["error_message"] == "import: No module named 'torch_neuronx'", row["error_message"]
    assert "\"device\": \"neuron\"" in row["reproduce_script"]


@pytest.mark.parametrize("args, named", [
    (["--workload", "train"], "--workload train needs --runner torch"),
    (["--steps", "4"], "--steps needs --workload train"),
    (["--runner", "torch", "--workload", "train", "--steps", "0"], "--steps 0: expected 1 to"),
    (["--runner", "torch", "--workload", "fit"], "--workload 'fit': expected inference or train"),
])
def test_bad_training_options_are_usage_errors_naming_the_option(canrun_bin, env, args, named):
    result = subprocess.run([canrun_bin, "check", str(FIXTURE), *args], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 2 and named in result.stderr, result.stderr


def test_training_rows_live_beside_generation_rows_and_the_space_serves_them(canrun_bin, env, tmp_path):
    """A generation check, then bfloat16 autocast and LoRA training checks of the same model into
    one results folder: three rows of one pair, the training ones within their tolerances."""
    out = tmp_path / "results"
    printed = []
    for args in ([], ["--workload", "train", *STEPS, "--dtype", "bfloat16"], ["--workload", "train", *STEPS, "--lora"]):
        result = subprocess.run([canrun_bin, "check", str(FIXTURE), "--json", "--runner", "torch", "--out", str(out),
                                 *args], capture_output=True, text=True, env=env, timeout=900)
        assert result.returncode == 0, result.stderr
        printed.append(tmp_path / f"row-{len(printed)}.json")
        printed[-1].write_text(result.stdout)
    # The training report of the two training rows: float32 LoRA as the current, bfloat16 as the candidate.
    report = subprocess.run([canrun_bin, "report", str(printed[2]), str(printed[1]), "--stop",
                             "loss_delta<5%,step_time<100x", "--candidate-price", "3.6"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert report.returncode == 0, report.stderr
    assert "# Migration report: training" in report.stdout and "GO: every stop condition holds" in report.stdout
    assert "| cost per 1,000 steps (cost_per_1k_steps) | not measured | $" in report.stdout, report.stdout
    mixed = subprocess.run([canrun_bin, "report", str(printed[0]), str(printed[1])], capture_output=True, text=True,
                           env=env, timeout=120)
    assert mixed.returncode == 2 and "one result is a training check's row" in mixed.stderr, mixed.stderr
    # repro and query tell the rows of one model apart by workload and dtype.
    repro = subprocess.run([canrun_bin, "repro", str(FIXTURE), "--data", str(out), "--workload", "train"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert repro.returncode == 2 and "2 rows for model" in repro.stderr and "--dtype picks one" in repro.stderr
    repro = subprocess.run([canrun_bin, "repro", str(FIXTURE), "--data", str(out), "--workload", "train", "--dtype",
                            "bfloat16"], capture_output=True, text=True, env=env, timeout=120)
    assert repro.returncode == 0, repro.stderr
    assert "expected_losses = [" in repro.stdout and "\"dtype\": \"bfloat16\"" in repro.stdout
    query = subprocess.run([canrun_bin, "query", "--data", str(out), "--workload", "train", "--format", "json"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert query.returncode == 0 and len(json.loads(query.stdout)) == 2
    [pair] = out.glob("*.parquet")
    assert pair.name == "torch-2.15.0+eager-cpu__transformers-5.23.0.parquet"
    space = Space(canrun_bin, out, REPO_ROOT / "data" / "catalog.jsonl")
    try:
        status, body, _ = space.get("/api/training?" + urllib.parse.urlencode({"task": "text-generation"}))
        assert status == 200
        bf16, lora = sorted(body["rows"], key=lambda row: stack(row)["dtype"])
        assert bf16["result"] == "PASS" and lora["result"] == "PASS", (bf16["error_message"], lora["error_message"])
        assert stack(bf16)["dtype"].startswith("bfloat16 (torch.autocast") and bf16["loss_tolerance"] == 5e-2
        assert bf16["train_losses"] != bf16["reference_losses"]  # bf16 compute rounds: not the float32 sums
        assert stack(lora)["training"].startswith("LoRA r8") and stack(lora)["peft"] == "0.22.0"
        assert stack(lora)["dtype"] == "float32" and lora["train_losses"] == lora["reference_losses"]
        assert (bf16["restart_check"], lora["restart_check"]) == ("bit-identical", "bit-identical")
        status, rows, _ = space.get("/api/rows?view=tested")
        assert status == 200 and [row["result"] for row in rows["rows"]] == ["PASS"]
        status, model, _ = space.get("/api/model?" + urllib.parse.urlencode({"id": str(FIXTURE)}))
        assert status == 200 and model["row"]["workload"] == "inference" and len(model["training"]) == 2
    finally:
        code, stderr = space.stop()
    assert code == 0, stderr


def test_the_reproduce_script_of_a_training_row_runs_as_printed(canrun_bin, env, tmp_path, torch_python):  # noqa: F811
    """As for a generation row (test_torch_runner.py): the venv that made the row, pip off every index."""
    row = train(canrun_bin, env, "--steps", "2")
    folder = tmp_path / "reproduce"
    folder.mkdir()
    (folder / ".venv-canrun-torch").symlink_to(pathlib.Path(torch_python).parent.parent)
    offline = {key: value for key, value in env.items() if not key.startswith("PIP_")}
    offline.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    (folder / "reproduce.sh").write_text(row["reproduce_script"])
    result = subprocess.run(["bash", "reproduce.sh"], cwd=folder, capture_output=True, text=True, timeout=600,
                            env=offline)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "losses differ from the row's by 0 relative at most" in result.stdout, result.stdout


def test_the_real_smollm2_folder_fine_tunes_and_its_loss_falls(canrun_bin, env):
    if not SMOLLM2.is_dir():
        pytest.fail(f"{SMOLLM2} is missing: run tools/fetch_smollm2.sh (scripts/test.sh does)")
    row = train(canrun_bin, env, "--steps", "3", model=SMOLLM2)
    assert (row["result"], row["weights"]) == ("PASS", "real"), row["error_message"]
    assert row["restart_check"] == "bit-identical"
    assert row["train_losses"][-1] < row["train_losses"][0]
    assert abs(row["native_step0_loss"] - row["reference_losses"][0]) <= 1e-4 * row["reference_losses"][0]


def test_a_training_sweep_checks_synthetic_weights_and_resumes(canrun_bin, env, tmp_path):
    """A catalog model without weights here trains on synthetic weights (no tokenizer: run.py takes
    the examples' bytes as ids); a second sweep of the same setup finds it recorded."""
    catalog = tmp_path / "catalog.jsonl"
    write_catalog(catalog, [entry("test/tiny-llama", "llama", json.loads((FIXTURE / "config.json").read_text()), 1)])
    out = tmp_path / "results"

    def sweep(*args):
        result = subprocess.run([canrun_bin, "sweep", "--catalog", str(catalog), "--runner", "torch", "--workload",
                                 "train", "--steps", "2", "--out", str(out), *args],
                                capture_output=True, text=True, env=env, timeout=900)
        assert result.returncode == 0, result.stderr
        return result.stdout + result.stderr

    sweep()
    rows = pq.read_table(out / "torch-2.15.0+eager-cpu__transformers-5.23.0.parquet").to_pylist()
    assert [(row["model_id"], row["weights"], row["workload"], row["result"]) for row in rows] == \
        [("test/tiny-llama", "synthetic", "train", "PASS")], rows[0]["error_message"]
    assert "1 already recorded" in sweep()
