"""`canrun sweep` over a small catalog of tiny configs (synthetic weights): rows for every
model, including crash, hang and out-of-memory in the child; a sweep killed midway resumes with
no row lost or duplicated; three shards at once merge into every model once; the dataset reads
back the same in pandas and DuckDB; query and repro."""
import json
import os
import signal
import subprocess
import time

import duckdb
import pandas as pd
import pytest

from conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"
PARQUET_GLOB = "canrun-*__cpu-*.parquet"
NO_RANK = {"rank": None, "note": "test catalog"}
RUNNABLE = ["test/tiny-llama", "test/tiny-qwen2", "test/tiny-qwen3", "test/tiny-mistral"]


def entry(model_id, model_type, config, selected=True, exclusion=None):
    return {"id": model_id, "task": "text-generation", "model_type": model_type, "config": config,
            "popularity": {"downloads": NO_RANK, "trending": NO_RANK}, "selected": selected,
            "exclusion": exclusion}


@pytest.fixture
def catalog(tmp_path):
    """Four tiny real configs, an unsupported family and an excluded model."""
    def config(name):
        return json.loads((FIXTURES / name / "config.json").read_text())
    rows = [entry("test/tiny-llama", "llama", config("llama_bf16")),
            entry("test/tiny-qwen2", "qwen2", config("qwen2")),
            entry("test/tiny-qwen3", "qwen3", config("qwen3_bf16")),
            entry("test/tiny-mistral", "mistral", config("mistral_f32")),
            entry("test/unknown-arch", "test_unknown_arch", {"hidden_size": 64}),
            entry("test/excluded", "qwen3", config("qwen3_bf16"), False, "not prioritized yet")]
    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def lab_env(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), HF_HUB_CACHE=str(tmp_path / "hub"))
    env.pop("CANRUN_CHECK_FAULT", None)
    env.pop("CANRUN_CACHE_DIR", None)
    return env


def sweep(canrun_bin, env, catalog, out, *args):
    return subprocess.run([canrun_bin, "sweep", "--all", "--catalog", str(catalog), "--out", str(out), *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


def read_rows(out):
    """The dataset through pandas and through DuckDB, checked to agree, as a dict by model."""
    [path] = out.glob(PARQUET_GLOB)
    frame = pd.read_parquet(path).sort_values("model_id").reset_index(drop=True)
    con = duckdb.connect()
    from_duckdb = con.execute(f"SELECT * FROM read_parquet('{path}') ORDER BY model_id").df()
    assert list(frame.columns) == list(from_duckdb.columns)
    for column in ["model_id", "result", "weights", "architecture", "error_type", "error_message", "prompt",
                   "reproduce_script", "cores", "wall_time_s", "matching_prefix_length"]:
        left = frame[column].tolist()
        right = from_duckdb[column].tolist()
        assert [None if pd.isna(v) else v for v in left] == [None if pd.isna(v) else v for v in right], column
    for a, b in zip(frame["generated_token_ids"], from_duckdb["generated_token_ids"]):
        assert (a is None and (b is None or (not isinstance(b, list) and pd.isna(b)))) or list(a) == list(b)
    counts = con.execute(f"SELECT model_id, count(*) AS n FROM read_parquet('{path}') GROUP BY model_id").fetchall()
    assert all(n == 1 for _, n in counts), counts
    return {row["model_id"]: row for row in frame.to_dict("records")}


def assert_runnable_pass(rows):
    for model in RUNNABLE:
        row = rows[model]
        assert row["result"] == "PASS", (model, row["error_message"])
        assert row["weights"] == "synthetic" and row["cores"] == 1
        assert list(row["generated_token_ids"]) == list(row["reference_token_ids"])
        assert row["prompt"].startswith("token ids [84 104 101 32 ")


def assert_not_run_rows(rows):
    assert rows["test/unknown-arch"]["result"] == "UNSUPPORTED_ARCHITECTURE"
    assert rows["test/unknown-arch"]["error_message"] == "architecture not supported: test_unknown_arch"
    assert rows["test/excluded"]["result"] == "EXCLUDED"
    assert rows["test/excluded"]["error_message"] == "not prioritized yet"
    for model in ("test/unknown-arch", "test/excluded"):  # nothing ran: no weights, no time
        assert pd.isna(rows[model]["weights"]) and pd.isna(rows[model]["wall_time_s"]), rows[model]


def test_sweep_killed_midway_resumes_without_loss_or_duplicates(canrun_bin, lab_env, catalog, tmp_path):
    out = tmp_path / "results"
    # The second model hangs, so the sweep is surely still running after the first row lands.
    env = dict(lab_env, CANRUN_CHECK_FAULT="hang:test/tiny-qwen2")
    process = subprocess.Popen([canrun_bin, "sweep", "--all", "--catalog", str(catalog), "--out", str(out),
                                "--timeout", "60"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not list(out.glob(PARQUET_GLOB)) and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    assert process.poll() is None, "the sweep ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    first = read_rows(out)
    assert list(first) == ["test/tiny-llama"]

    result = sweep(canrun_bin, lab_env, catalog, out, "--timeout", "60")
    assert result.returncode == 0, result.stderr
    assert "1 already recorded" in result.stdout
    # None of the catalog's models is in the (empty) Hugging Face cache: the sweep says so.
    assert "models had no real weights in the Hugging Face cache" in result.stdout
    rows = read_rows(out)
    assert sorted(rows) == sorted(RUNNABLE + ["test/unknown-arch", "test/excluded"])
    assert_runnable_pass(rows)
    assert_not_run_rows(rows)
    assert rows["test/tiny-llama"]["timestamp"] == first["test/tiny-llama"]["timestamp"]  # kept, not redone

    again = sweep(canrun_bin, lab_env, catalog, out)
    assert "no new rows" in again.stdout and "6 already recorded" in again.stdout
    assert len(read_rows(out)) == 6


def test_synthetic_checkpoints_removed_unless_kept(canrun_bin, lab_env, catalog, tmp_path):
    synthetic = tmp_path / "xdg" / "canrun" / "synthetic"
    result = sweep(canrun_bin, lab_env, catalog, tmp_path / "removed", "--search", "tiny-llama")
    assert result.returncode == 0, result.stderr
    assert read_rows(tmp_path / "removed")["test/tiny-llama"]["result"] == "PASS"
    assert list(synthetic.iterdir()) == []

    result = sweep(canrun_bin, lab_env, catalog, tmp_path / "kept", "--search", "tiny-llama", "--keep-synthetic")
    assert result.returncode == 0, result.stderr
    [kept] = list(synthetic.iterdir())
    assert (kept / "model.safetensors").is_file() and (kept / "config.json").is_file()


def test_cache_dir_reaches_every_check(canrun_bin, lab_env, catalog, tmp_path):
    plans = tmp_path / "plans"
    # Kept synthetic weights: a checkpoint made again has new file times, which a plan's key includes.
    for out, cache_hit in ((tmp_path / "first", False), (tmp_path / "second", True)):
        result = sweep(canrun_bin, lab_env, catalog, out, "--search", "tiny-q", "--cache-dir", plans,
                       "--keep-synthetic")
        assert result.returncode == 0, result.stderr
        rows = read_rows(out)
        for model in ["test/tiny-qwen2", "test/tiny-qwen3"]:
            assert rows[model]["result"] == "PASS", rows[model]["error_message"]
            assert rows[model]["plan_cache_hit"] == cache_hit and rows[model]["recompilations"] == 0
            assert rows[model]["compile_time_s"] > 0 and rows[model]["peak_activation_bytes"] > 0
    assert any(plans.iterdir())
    assert not (tmp_path / "xdg" / "canrun" / "plans").exists()


def test_synthetic_weights_removed_afterwards_keep_no_plans(canrun_bin, lab_env, catalog, tmp_path):
    plans = tmp_path / "plans"
    result = sweep(canrun_bin, lab_env, catalog, tmp_path / "results", "--search", "tiny-llama", "--cache-dir", plans)
    assert result.returncode == 0, result.stderr
    row = read_rows(tmp_path / "results")["test/tiny-llama"]
    assert row["result"] == "PASS" and row["compile_time_s"] > 0 and row["recompilations"] == 0
    assert row["plan_cache_hit"] is None
    assert not plans.exists() and not (tmp_path / "xdg" / "canrun" / "plans").exists()


def test_crash_hang_and_oom_become_rows(canrun_bin, lab_env, catalog, tmp_path):
    out = tmp_path / "results"
    env = dict(lab_env, CANRUN_CHECK_FAULT="crash:test/tiny-qwen2,hang:test/tiny-qwen3,oom:test/tiny-mistral")
    start = time.time()
    result = sweep(canrun_bin, env, catalog, out, "--timeout", "6", "--memory-limit", "768 MiB", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert time.time() - start < 40
    rows = read_rows(out)
    assert len(rows) == 6
    assert rows["test/tiny-llama"]["result"] == "PASS"
    crashed = rows["test/tiny-qwen2"]
    assert crashed["result"] == "FAIL_RUNTIME" and "SIGABRT" in crashed["error_message"]
    hung = rows["test/tiny-qwen3"]
    assert hung["result"] == "TIMEOUT" and "6 s" in hung["error_message"]
    assert 6 <= hung["wall_time_s"] < 15
    oom = rows["test/tiny-mistral"]
    assert oom["result"] == "OOM", oom["error_message"]
    assert_not_run_rows(rows)
    # One line per model on a non-terminal stderr, and the closing counts.
    assert result.stderr.count("] test/") == 6
    assert "FAIL_RUNTIME 1" in result.stdout and "TIMEOUT 1" in result.stdout and "OOM 1" in result.stdout

    # --redo checks those models again without the faults and replaces their rows, and only theirs.
    redo = sweep(canrun_bin, lab_env, catalog, out, "--redo", "TIMEOUT", "--redo", "OOM")
    assert redo.returncode == 0, redo.stderr
    assert "PASS 2" in redo.stdout and "4 already recorded" in redo.stdout
    after = read_rows(out)
    assert len(after) == 6
    assert after["test/tiny-qwen3"]["result"] == "PASS" and after["test/tiny-mistral"]["result"] == "PASS"
    assert after["test/tiny-qwen2"]["timestamp"] == rows["test/tiny-qwen2"]["timestamp"]


def test_three_shards_at_once_merge_into_every_model_once(canrun_bin, run_canrun, lab_env, catalog, tmp_path):
    out = tmp_path / "results"
    shards = [subprocess.Popen([canrun_bin, "sweep", "--all", "--catalog", str(catalog), "--out", str(out),
                                "--shard", f"{k}/3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=lab_env) for k in (1, 2, 3)]
    for k, shard in enumerate(shards, start=1):
        stdout, stderr = shard.communicate(timeout=300)
        assert shard.returncode == 0, stderr
        assert f"shard {k}/3: rows in each pair's part-{k}-of-3.parquet part" in stdout
    assert not list(out.glob(PARQUET_GLOB))  # only parts until the merge
    parts = list(out.glob("canrun-*__cpu-*/part-*-of-3.parquet"))
    assert 1 < len(parts) <= 3  # six models over three slices
    # Before the merge the readers combine the parts, and the card globs them.
    query = run_canrun("query", "--data", out, "--format", "json")
    assert query.returncode == 0, query.stderr
    assert sorted(row["model_id"] for row in json.loads(query.stdout)) == sorted(
        RUNNABLE + ["test/unknown-arch", "test/excluded"])
    assert "__cpu-" in (out / "README.md").read_text() and "/*.parquet" in (out / "README.md").read_text()
    merged = run_canrun("dataset", "merge", out)
    assert merged.returncode == 0, merged.stderr
    assert f"merged {len(parts)} parts into " in merged.stdout and ": 6 models" in merged.stdout
    rows = read_rows(out)  # one row per model, as pandas and DuckDB read it
    assert sorted(rows) == sorted(RUNNABLE + ["test/unknown-arch", "test/excluded"])
    assert_runnable_pass(rows)
    assert_not_run_rows(rows)
    assert not list(out.glob("canrun-*__cpu-*/"))  # the parts are gone
    card = (out / "README.md").read_text()
    assert "canrun-" in card and "/*.parquet" not in card  # the card names the pair's file
    # A shard run again finds its models in the merged file: nothing is checked twice.
    again = sweep(canrun_bin, lab_env, catalog, out, "--shard", "2/3")
    assert again.returncode == 0 and "no new rows" in again.stdout, again.stdout + again.stderr
    # A model the catalog stops selecting leaves the dataset by name; a name without a row changes nothing.
    unknown = run_canrun("dataset", "remove", out, "--model", "test/excluded", "--model", "test/never-checked")
    assert unknown.returncode != 0 and "--model 'test/never-checked': no row in" in unknown.stderr, unknown.stderr
    assert "test/excluded" in read_rows(out)
    removed = run_canrun("dataset", "remove", out, "--model", "test/excluded")
    assert removed.returncode == 0 and "test/excluded (5 rows left)" in removed.stdout, removed.stdout + removed.stderr
    assert sorted(read_rows(out)) == sorted(RUNNABLE + ["test/unknown-arch"])


@pytest.mark.parametrize("shard", ["0/3", "4/3", "2", "x/3"])
def test_a_bad_shard_is_named(canrun_bin, lab_env, catalog, tmp_path, shard):
    result = sweep(canrun_bin, lab_env, catalog, tmp_path / "results", "--shard", shard)
    assert result.returncode != 0 and f"--shard '{shard}': expected K/N" in result.stderr, result.stderr
    assert not (tmp_path / "results").exists()


def test_redo_names_an_unknown_result(canrun_bin, lab_env, catalog, tmp_path):
    result = sweep(canrun_bin, lab_env, catalog, tmp_path / "results", "--redo", "TIMEOUTS")
    assert result.returncode == 2
    assert "--redo" in result.stderr and "TIMEOUTS" in result.stderr and "PASS_TOP5" in result.stderr


def test_query_and_repro(canrun_bin, run_canrun, lab_env, catalog, tmp_path):
    out = tmp_path / "results"
    assert sweep(canrun_bin, lab_env, catalog, out).returncode == 0
    table = run_canrun("query", "--data", out)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:5] == ["model_id", "task", "architecture", "weights", "result"]
    passed = json.loads(run_canrun("query", "--data", out, "--result", "PASS", "--format", "json").stdout)
    assert sorted(r["model_id"] for r in passed) == sorted(RUNNABLE)
    qwen = json.loads(run_canrun("query", "--data", out, "--model", "QWEN", "--format", "json").stdout)
    assert sorted(r["model_id"] for r in qwen) == ["test/tiny-qwen2", "test/tiny-qwen3"]
    csv = run_canrun("query", "--data", out, "--format", "csv").stdout
    frame = pd.read_csv(pd.io.common.StringIO(csv))
    assert len(frame) == 6 and list(frame.columns)[:2] == ["model_id", "revision"]

    script = run_canrun("repro", "test/tiny-qwen3", "--data", out)
    assert script.returncode == 0, script.stderr
    row = next(r for r in passed if r["model_id"] == "test/tiny-qwen3")
    assert script.stdout == row["reproduce_script"]
    assert "build/canrun check test/tiny-qwen3 --synthetic --profile local --catalog" in script.stdout
    assert "Expected result: PASS" in script.stdout

    bad = run_canrun("query", "--data", out, "--result", "MAYBE")
    assert bad.returncode == 2 and "--result 'MAYBE'" in bad.stderr
    other = run_canrun("query", "--data", out, "--compiler", "canrun-9")
    assert other.returncode == 2 and "present: canrun-" in other.stderr
    missing = run_canrun("repro", "test/none", "--data", out)
    assert missing.returncode == 2 and "no row for model 'test/none'" in missing.stderr


def test_image_text_to_text_task(canrun_bin, lab_env, tmp_path):
    """A tiny Qwen3-VL config on synthetic weights: the sweep of that task checks it with the check image."""
    row = entry("test/tiny-qwen3-vl", "qwen3_vl", json.loads((FIXTURES / "qwen3_vl" / "config.json").read_text()))
    row["task"] = "image-text-to-text"
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    result = sweep(canrun_bin, lab_env, catalog, out, "--task", "image-text-to-text")
    assert result.returncode == 0, result.stderr
    checked = read_rows(out)["test/tiny-qwen3-vl"]
    assert checked["result"] == "PASS" and checked["task"] == "image-text-to-text"
    assert checked["weights"] == "synthetic"
    assert checked["prompt"].startswith("the check image (64x48, canrun's) and \"Describe this image.\"")
    assert list(checked["generated_token_ids"]) == list(checked["reference_token_ids"])
