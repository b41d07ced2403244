"""The lab's Parquet dataset read back with pyarrow, pandas and DuckDB: every value compared.

The C++ test LabDataset.WritesSampleForPythonReaders (in the canrun_tests binary beside canrun)
writes sample rows as Parquet and, through another channel, as JSON; each reader here must see
exactly the JSON's values.
"""
import json
import math
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

FILE_NAME = "canrun-0.1.0__cpu-x86_64-avx2-fma.parquet"


@pytest.fixture(scope="module")
def sample(canrun_bin, tmp_path_factory):
    """(path of the Parquet file, the rows as the C++ side wrote them to JSON)."""
    tests_bin = Path(canrun_bin).parent / "canrun_tests"
    if not tests_bin.is_file():
        pytest.fail(f"{tests_bin} not found: build the canrun_tests target")
    out = tmp_path_factory.mktemp("dataset")
    subprocess.run([str(tests_bin), "--gtest_filter=LabDataset.WritesSampleForPythonReaders"],
                   env={**os.environ, "CANRUN_DATASET_SAMPLE_DIR": str(out)},
                   check=True, capture_output=True, timeout=300)
    return out / FILE_NAME, json.loads((out / "expected.json").read_text())


def iso(moment):
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def plain(value):
    """A reader's value in JSON's terms: lists, dicts, None, int, float, str, ISO timestamps."""
    if isinstance(value, (np.ndarray, list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (pd.Timestamp, datetime)):
        return iso(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def assert_rows_equal(actual, expected):
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected)):
        assert set(got) == set(want), f"row {index}: columns differ"
        for column in want:
            assert plain(got[column]) == want[column], f"row {index}, column {column}"


def test_sample_covers_nulls_lists_and_unicode(sample):
    _, expected = sample
    assert len(expected) == 5
    assert expected[1]["cores"] is None and expected[1]["generated_token_ids"] is None
    assert expected[2]["generated_token_ids"] == []
    assert expected[3]["reason_code"] == "needs_memory" and expected[3]["wall_time_s"] is None
    assert "🎨" in expected[0]["generated_text"]
    # A training check's per-step lists, an empty one among them.
    assert expected[4]["workload"] == "train" and expected[4]["train_losses"] == [2.5, 2.25, 1.875]
    assert expected[4]["reference_grad_norms"] == [] and expected[0]["workload"] == "inference"


def test_pyarrow_reads_types_and_values(sample):
    path, expected = sample
    table = pq.read_table(path)
    schema = table.schema
    assert schema.field("generated_token_ids").type == pa.list_(pa.int32())
    assert schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert schema.field("software_stack").type.value_type == pa.struct(
        [pa.field("component", pa.string(), nullable=False), pa.field("version", pa.string(), nullable=False)])
    assert schema.field("cores").type == pa.int32() and schema.field("cores").nullable
    assert not schema.field("model_id").nullable
    assert schema.field("plan_cache_hit").type == pa.bool_() and schema.field("recompilations").type == pa.int32()
    assert schema.field("train_losses").type == pa.list_(pa.float64()) and schema.field("train_losses").nullable
    assert_rows_equal(table.to_pylist(), expected)


def test_pandas_reads_values(sample):
    path, expected = sample
    frame = pd.read_parquet(path)
    assert str(frame["timestamp"].dtype) == "datetime64[us, UTC]"
    assert_rows_equal(frame.to_dict("records"), expected)


def test_pandas_keeps_integer_and_boolean_columns_as_they_are(sample):
    """Nullable integer and boolean columns come back as pandas' Int32/Int64/boolean, not float64
    or object: the file's pandas metadata names them."""
    path, _ = sample
    frame = pd.read_parquet(path)
    schema = pq.read_schema(path)
    integers = [f.name for f in schema if pa.types.is_integer(f.type)]
    booleans = [f.name for f in schema if pa.types.is_boolean(f.type)]
    assert {"cores", "parameter_count", "first_divergence_step", "schema_version"} <= set(integers)
    assert {"tokens_match", "plan_cache_hit"} <= set(booleans)
    for name in integers:
        assert pd.api.types.is_integer_dtype(frame[name]), (name, frame[name].dtype)
    for name in booleans:
        assert pd.api.types.is_bool_dtype(frame[name]), (name, frame[name].dtype)


def test_duckdb_reads_values(sample):
    path, expected = sample
    connection = duckdb.connect()
    described = connection.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
    types = {row[0]: row[1] for row in described}
    assert types["timestamp"] == "TIMESTAMP WITH TIME ZONE"
    assert types["generated_token_ids"] == "INTEGER[]"
    # DuckDB itself renders the instant in UTC, so the comparison checks its reading of the zone.
    result = connection.execute(
        "SELECT * REPLACE (strftime(timezone('UTC', \"timestamp\"), '%Y-%m-%dT%H:%M:%S.%fZ') AS \"timestamp\") "
        f"FROM read_parquet('{path}')")
    names = [column[0] for column in result.description]
    assert_rows_equal([dict(zip(names, row)) for row in result.fetchall()], expected)


def test_duckdb_queries_by_status_and_file_name(sample):
    path, _ = sample
    rows = duckdb.connect().execute(
        f"SELECT result, count(*), any_value(filename) FROM read_parquet('{path}', filename = true) "
        "GROUP BY result ORDER BY result").fetchall()
    assert [(r[0], r[1]) for r in rows] == [("FAIL_LOAD", 1), ("NOT_TESTED", 1), ("PASS", 3)]
    assert all(Path(r[2]).name == FILE_NAME for r in rows)


def test_file_without_the_compile_columns_reads_them_as_null(canrun_bin, sample, tmp_path):
    """Files written before recompilations, plan_cache_hit and peak_activation_bytes existed."""
    path, expected = sample
    added = ["recompilations", "plan_cache_hit", "peak_activation_bytes"]
    pq.write_table(pq.read_table(path).drop_columns(added), tmp_path / FILE_NAME)
    result = subprocess.run([canrun_bin, "query", "--data", str(tmp_path), "--format", "json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = {row["model_id"]: row for row in json.loads(result.stdout)}
    assert len(rows) == len(expected)
    for want in expected:
        got = rows[want["model_id"]]
        assert all(got[column] is None for column in added)
        assert got["compile_time_s"] == want["compile_time_s"]
