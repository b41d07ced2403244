"""`canrun diff` on two version pairs of a dataset folder: the sample rows the C++ writer makes
(LabDataset.WritesSampleForPythonReaders) as the older pair, and a copy with one passing model
now failing as the newer pair, written with pyarrow as any other runner's file would be."""
import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

FROM = "canrun-0.1.0__cpu-x86_64-avx2-fma"
TO = "canrun-0.2.0__cpu-x86_64-avx2-fma"


@pytest.fixture(scope="module")
def results(canrun_bin, tmp_path_factory):
    tests_bin = Path(canrun_bin).parent / "canrun_tests"
    out = tmp_path_factory.mktemp("diff")
    subprocess.run([str(tests_bin), "--gtest_filter=LabDataset.WritesSampleForPythonReaders"],
                   env={**os.environ, "CANRUN_DATASET_SAMPLE_DIR": str(out)},
                   check=True, capture_output=True, timeout=300)
    (out / "expected.json").unlink()
    table = pq.read_table(out / f"{FROM}.parquet")
    rows = table.to_pylist()
    broken = next(i for i, row in enumerate(rows) if row["result"] == "PASS")
    rows[broken]["result"] = "FAIL_RUNTIME"
    rows[broken]["error_message"] = "worker died"
    for row in rows:
        row["compiler_version"] = "canrun-0.2.0"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), out / f"{TO}.parquet")
    return out, rows[broken]["model_id"]


def test_table_names_the_newly_failing_model_with_its_error(run_canrun, results):
    folder, model = results
    result = run_canrun("diff", "--data", folder, "--from", FROM, "--to", TO)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith(model))
    assert "newly failing: PASS -> FAIL_RUNTIME" in line and "worker died" in line
    assert "1 changed, 1 regression;" in result.stdout


def test_json_lists_every_model_with_all(run_canrun, results):
    folder, model = results
    result = run_canrun("diff", "--data", folder, "--from", FROM, "--to", TO, "--all", "--format", "json")
    assert result.returncode == 0, result.stderr
    models = json.loads(result.stdout)["models"]
    assert len(models) == len(pq.read_table(folder / f"{FROM}.parquet"))
    changed = [m for m in models if m["changes"]]
    assert [m["model_id"] for m in changed] == [model]
    assert changed[0]["regression"] and changed[0]["to"]["result"] == "FAIL_RUNTIME"


def test_fail_on_regression_exits_one(run_canrun, results):
    folder, _ = results
    result = run_canrun("diff", "--data", folder, "--from", FROM, "--to", TO, "--fail-on-regression")
    assert result.returncode == 1
    assert f"1 regression from {FROM} to {TO} (--fail-on-regression)" in result.stderr
    same = run_canrun("diff", "--data", folder, "--from", FROM, "--to", FROM, "--fail-on-regression")
    assert same.returncode == 0, same.stderr


@pytest.mark.parametrize("args, message", [
    (["--from", "canrun-0.1.0", "--to", TO], "--from 'canrun-0.1.0': expected COMPILER__LIBRARY"),
    (["--from", FROM, "--to", "canrun-9__cpu"], f"--to canrun-9__cpu: no such version pair"),
    (["--from", FROM, "--to", TO, "--time-ratio", "0.5"], "--time-ratio must be at least 1"),
])
def test_bad_pairs_and_ratios_are_usage_errors(run_canrun, results, args, message):
    folder, _ = results
    result = run_canrun("diff", "--data", folder, *args)
    assert result.returncode == 2
    assert message in result.stderr
