"""The dataset the project ships (dataset/, made by scripts/make_dataset.sh): a Hugging Face dataset
repository whose card names its files, one row per selected catalog model with its host and date,
and what `canrun query` and `canrun repro` read when no --data is given."""
import json

import pyarrow.parquet as pq

from conftest import REPO_ROOT

DATASET = REPO_ROOT / "dataset"


def rows():
    [path] = DATASET.glob("canrun-*__cpu-*.parquet")
    return path, pq.read_table(path).to_pylist()


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


def test_query_and_repro_read_it_by_default(run_canrun, tmp_path):
    _, table = rows()
    query = run_canrun("query", "--format", "json")
    assert query.returncode == 0, query.stderr
    assert sorted(row["model_id"] for row in json.loads(query.stdout)) == sorted(row["model_id"] for row in table)
    repro = run_canrun("repro", "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert repro.returncode == 0, repro.stderr
    assert "test -d models/SmolLM2-135M-Instruct || bash tools/fetch_smollm2.sh\n" in repro.stdout
