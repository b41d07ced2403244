"""The dataset the project ships (dataset/, made by scripts/make_dataset.sh): a Hugging Face dataset
repository whose card names its files, one row per selected catalog model with its host and date,
what `canrun query` and `canrun repro` read when no --data is given, and what the Space shows: a
checked row for every selected model of every task, all-MiniLM-L6-v2's on its real weights; and the
training checks on torch's cpu: SmolLM2-135M-Instruct on its real weights in float32 and bfloat16."""
import json
import os
import subprocess

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from conftest import REPO_ROOT
from space import Space

DATASET = REPO_ROOT / "dataset"


def rows():
    [path] = DATASET.glob("canrun-*__cpu-*.parquet")
    return path, pq.read_table(path).to_pylist()


def test_the_torch_pair_holds_training_rows_of_smollm2_in_both_dtypes():
    table = pq.read_table(DATASET / "torch-2.15.0+eager-cpu__transformers-5.23.0.parquet").to_pylist()
    training = [row for row in table if row["workload"] == "train"]
    smollm2 = {next(c["version"] for c in row["software_stack"] if c["component"] == "dtype")[:8]: row
               for row in training if row["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"}
    assert set(smollm2) == {"float32", "bfloat16"}
    for row in smollm2.values():
        assert (row["result"], row["weights"], row["restart_check"]) == ("PASS", "real", "bit-identical")
        assert row["train_steps"] == 20 and row["train_losses"][-1] < row["train_losses"][0] / 10
        assert abs(row["native_step0_loss"] - row["reference_losses"][0]) <= 1e-4 * row["reference_losses"][0]
    # Every training row that ran passed, on synthetic weights for the other small selected models.
    assert all(row["result"] == "PASS" for row in training if row["reason_code"] is None)


def test_every_selected_model_has_one_row_with_its_host_and_date():
    path, table = rows()
    selected = {json.loads(line)["id"] for line in (REPO_ROOT / "data" / "catalog.jsonl").read_text().splitlines()
                if json.loads(line).get("selected")}
    ids = [row["model_id"] for row in table]
    assert len(ids) == len(set(ids)) and set(ids) == selected
    for row in table:
        assert row["host"] and row["timestamp"] is not None and row["result"], row["model_id"]
        assert row["reproduce_script"].startswith("#!/usr/bin/env bash\n")
    card = (DATASET / "README.md").read_text()
    assert f"- config_name: {path.stem}\n  data_files:\n  - {path.name}\n" in card


def test_the_planner_holds_every_checked_model_within_ten_percent_of_its_peak():
    """For every row that ran, of every task, the planner's estimate (the larger of the tested and
    the reference run, as planned before running) is within 10% of the check's measured peak RSS."""
    _, table = rows()
    ran = [row for row in table if row["result"].startswith("PASS")]
    assert len(ran) > 40 + 20
    for row in ran:
        ratio = row["planned_memory_bytes"] / row["peak_host_memory_bytes"]
        assert 0.9 <= ratio <= 1.1, (row["model_id"], row["planned_memory_bytes"], row["peak_host_memory_bytes"])


def test_every_parquet_file_has_the_schema_canrun_writes(canrun_bin, tmp_path):
    """pyarrow and pandas read every file of the dataset with one schema, the one canrun writes
    now; integer and boolean columns stay integers and booleans in pandas."""
    fixture = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3"
    subprocess.run([canrun_bin, "check", str(fixture), "--out", str(tmp_path)], check=True, capture_output=True,
                   timeout=120)
    [written] = tmp_path.glob("*.parquet")
    expected = pq.read_schema(written)
    files = sorted(DATASET.glob("**/*.parquet"))
    assert files
    for path in files:
        schema = pq.read_schema(path)
        assert schema.equals(expected, check_metadata=False), (path, schema, expected)
        frame = pd.read_parquet(path)
        assert list(frame.columns) == schema.names
        for field in schema:
            if pa.types.is_integer(field.type):
                assert pd.api.types.is_integer_dtype(frame[field.name]), (path.name, field.name)
            if pa.types.is_boolean(field.type):
                assert pd.api.types.is_bool_dtype(frame[field.name]), (path.name, field.name)


def test_query_and_repro_read_it_by_default(run_canrun, canrun_bin, tmp_path):
    _, table = rows()
    no_results = dict(os.environ, CANRUN_RESULTS=str(tmp_path / "none"))
    query = subprocess.run([canrun_bin, "query", "--format", "json"], capture_output=True, text=True, env=no_results)
    assert query.returncode == 0, query.stderr
    assert sorted(row["model_id"] for row in json.loads(query.stdout)) == sorted(row["model_id"] for row in table)
    repro = run_canrun("repro", "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert repro.returncode == 0, repro.stderr
    assert "test -d models/SmolLM2-135M-Instruct || bash tools/fetch_smollm2.sh\n" in repro.stdout
    repro = run_canrun("repro", "sentence-transformers/all-MiniLM-L6-v2")
    assert repro.returncode == 0, repro.stderr
    assert "test -d models/all-MiniLM-L6-v2 || bash tools/fetch_minilm.sh\n" in repro.stdout


def test_the_encoders_pass_all_minilm_on_its_real_weights():
    _, table = rows()
    minilm = next(row for row in table if row["model_id"] == "sentence-transformers/all-MiniLM-L6-v2")
    assert (minilm["result"], minilm["weights"], minilm["verification"]) == ("PASS", "real", "cosine")
    assert minilm["min_cosine"] >= 0.99999 and minilm["sentences_per_s"] > 0
    encoders = [row for row in table if row["task"] in ("sentence-similarity", "feature-extraction", "text-ranking")]
    assert len(encoders) == 26
    gte = next(row for row in encoders if row["model_id"] == "Alibaba-NLP/gte-multilingual-base")
    assert (gte["result"], gte["error_type"]) == ("FAIL_LOAD", "unsupported_option")
    assert "rope type 'ntk'" in gte["error_message"]
    for row in encoders:
        assert row["schema_version"] == 4 and row["generated_token_ids"] is None, row["model_id"]
        if row["result"] != "PASS":
            continue
        if row["task"] == "text-ranking":
            assert row["max_score_difference"] is not None and row["min_cosine"] is None, row["model_id"]
        else:
            assert row["min_cosine"] is not None and row["max_score_difference"] is None, row["model_id"]


def test_the_space_shows_checked_rows_of_both_tasks(canrun_bin):
    _, table = rows()
    space = Space(canrun_bin, DATASET, REPO_ROOT / "data" / "catalog.jsonl")
    try:
        for task in ("text-generation", "image-text-to-text", "sentence-similarity", "feature-extraction",
                     "text-ranking"):
            status, body, _ = space.get(f"/api/rows?view=selected&task={task}")
            assert status == 200 and body["total"] > 0, task
            results = {row["model_id"]: row["result"] for row in body["rows"]}
            assert results == {row["model_id"]: row["result"] for row in table if row["task"] == task}
            assert "PASS" in results.values(), task
    finally:
        code, stderr = space.stop()
    assert code == 0, stderr
