"""`canrun catalog`: listing, filters, plans on device profiles, and errors that name the field."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT

CATALOG = REPO_ROOT / "data" / "catalog.jsonl"
SNAPSHOT = REPO_ROOT.parent / "shared" / "catalog" / "models.jsonl"


def catalog_rows():
    return [json.loads(line) for line in CATALOG.read_text().splitlines()]


def catalog_json(run_canrun, *args):
    result = run_canrun("catalog", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_table_lists_every_model(run_canrun):
    result = run_canrun("catalog")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:5] == ["MODEL", "TASK", "ARCH", "PARAMS", "DL"]
    assert "CORES@trn2" in lines[0]
    qwen = next(line for line in lines if line.startswith("Qwen/Qwen3-0.6B "))
    assert qwen.split()[1:7] == ["text-generation", "qwen3", "0.75B", "#1", "1", "selected"]
    assert f"{len(catalog_rows())} models" in lines[-1]


def test_filters_by_task_selection_search_and_arch(run_canrun):
    vision = catalog_json(run_canrun, "--task", "image-text-to-text")
    assert len(vision) == sum(r["task"] == "image-text-to-text" for r in catalog_rows())
    # The reason is computed from the registry, not read from the file: the families that read
    # images are selected where they fit (else the file's reason), the others not supported.
    readers = {"qwen3_vl", "qwen3_5", "qwen3_5_moe", "qwen2_5_vl", "qwen2_vl"}
    stored = {r["id"]: r for r in catalog_rows()}
    for m in vision:
        if m["model_type"] in readers:
            row = stored[m["id"]]
            assert (m["selected"], m["exclusion"]) == (row["selected"], row["exclusion"]), m["id"]
        else:
            assert m["exclusion"] == f"architecture not supported: {m['model_type']}", m["id"]
    assert sum(m["selected"] for m in vision) == 13

    selected = catalog_json(run_canrun, "--selected")
    assert len(selected) == sum(r["selected"] for r in catalog_rows())
    assert all(m["selected"] for m in selected)

    assert [m["id"] for m in catalog_json(run_canrun, "--search", "QWEN3-0.6")] == ["Qwen/Qwen3-0.6B"]
    assert {m["model_type"] for m in catalog_json(run_canrun, "--arch", "mistral")} == {"mistral"}


def test_json_has_popularity_with_date_and_honest_trending(run_canrun):
    [qwen] = catalog_json(run_canrun, "--search", "Qwen/Qwen3-0.6B")
    assert qwen["downloads"]["rank"] == 1
    assert qwen["downloads"]["as_of"] == "2026-05-12"
    assert qwen["downloads"]["source"].startswith("https://")
    assert qwen["trending"]["rank"] is None and "no trending rank" in qwen["trending"]["note"]
    assert qwen["config"]["hidden_size"] == 1024


def test_plans_on_builtin_profiles(run_canrun):
    [qwen] = catalog_json(run_canrun, "--search", "Qwen/Qwen3-0.6B")
    assert qwen["plan"]["cores"] == 1 and qwen["plan"]["parameters"] == 596049920
    assert qwen["plan"]["estimate_from"] == "architecture spec"
    [llama] = catalog_json(run_canrun, "--search", "Llama-3.1-70B-Instruct")
    assert (llama["plan"]["cores"], llama["plan"]["tp_degree"]) == (8, 8)
    [on_h200] = catalog_json(run_canrun, "--search", "Llama-3.1-70B-Instruct", "--profile", "h200")
    assert on_h200["plan"]["cores"] is None
    assert on_h200["plan"]["reason"] == "needs more than 1 core"


def test_user_profile_file(run_canrun, tmp_path):
    profiles = tmp_path / "profiles.json"
    profiles.write_text(json.dumps({"profiles": [
        {"name": "small", "cores": 12, "memory_per_core": "6 GiB", "description": "test"}]}))
    [qwen] = catalog_json(run_canrun, "--search", "Qwen/Qwen3-8B", "--profiles", profiles, "--profile", "small")
    # 16.4 GB of bf16 weights, of which every worker holds the embeddings and lm_head (2.5 GB)
    # and its share of the layers: 8 cores of 6 GiB hold it, 4 do not; 12 is not a planned count.
    assert qwen["plan"]["cores"] == 8 and qwen["plan"]["profile"] == "small"


@pytest.mark.parametrize("profile, fragment", [
    ({"name": "x", "cores": 0, "memory_per_core": "4 GiB"}, "profiles[0]: field 'cores'"),
    ({"name": "x", "cores": 2, "memory_per_core": "4 GB RAM"}, "profiles[0]: field 'memory_per_core'"),
    ({"name": "x", "cores": 2}, "profiles[0]: field 'memory_per_core'"),
    ({"name": "trn2", "cores": 2, "memory_per_core": 1024}, "profile 'trn2' is defined twice"),
])
def test_bad_profile_files_name_the_field(run_canrun, tmp_path, profile, fragment):
    profiles = tmp_path / "profiles.json"
    profiles.write_text(json.dumps({"profiles": [profile]}))
    result = run_canrun("catalog", "--profiles", profiles)
    assert result.returncode in (1, 2)
    assert fragment in result.stderr and str(profiles) in result.stderr, result.stderr


def test_unknown_profile_and_task_are_usage_errors(run_canrun):
    result = run_canrun("catalog", "--profile", "tpu")
    assert result.returncode == 2
    assert "unknown device profile 'tpu' (known: local, trn2, h200)" in result.stderr
    assert run_canrun("catalog", "--task", "text-to-image").returncode != 0


def test_damaged_catalog_names_line_and_field(run_canrun, tmp_path):
    rows = CATALOG.read_text().splitlines()
    broken = json.loads(rows[1])
    broken["popularity"]["downloads"]["rank"] = 0
    bad = tmp_path / "catalog.jsonl"
    bad.write_text(rows[0] + "\n" + json.dumps(broken) + "\n")
    result = run_canrun("catalog", "--catalog", bad)
    assert result.returncode == 1
    assert f"{bad}:2: popularity: downloads: field 'rank'" in result.stderr, result.stderr


@pytest.mark.skipif(not SNAPSHOT.is_file(), reason="the shared catalog snapshot is not beside the repository")
def test_committed_catalog_is_what_the_script_builds(tmp_path):
    out = tmp_path / "catalog.jsonl"
    subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "build_catalog.py"), "--out", str(out)],
                   check=True, capture_output=True, timeout=120)
    assert out.read_text() == CATALOG.read_text(), "data/catalog.jsonl is stale: rerun tools/build_catalog.py"


def test_encoder_rows_say_why_they_are_not_selected(run_canrun):
    rows = {r["id"]: r for r in map(json.loads, CATALOG.read_text().splitlines())}
    encoders = [r for r in rows.values() if r["task"] in ("sentence-similarity", "feature-extraction", "text-ranking",
                                                          "text-classification")]
    assert len(encoders) == 63
    assert rows["sentence-transformers/all-MiniLM-L6-v2"]["selected"]
    assert rows["cross-encoder/ms-marco-MiniLM-L6-v2"]["selected"]
    assert rows["sentence-transformers/all-MiniLM-L6-v2"]["sentence_transformers"]["pooling"]["mode"] == "mean"
    # No config in the snapshot; only partial fields; a Dense module without shapes; no head.
    assert rows["intfloat/e5-large-v2"]["model_type"] is None
    assert rows["intfloat/e5-large-v2"]["exclusion"].startswith("model_type unknown")
    assert rows["mixedbread-ai/mxbai-embed-large-v1"]["exclusion"] == "config incomplete: the snapshot has no intermediate_size"
    assert rows["sentence-transformers/LaBSE"]["exclusion"].startswith("sentence-transformers module Dense")
    assert rows["ProsusAI/finbert"]["exclusion"] == "not prioritized yet"
    # Third-party download figures are kept apart and unranked.
    minilm = rows["sentence-transformers/all-MiniLM-L6-v2"]["popularity"]
    assert minilm["downloads"]["rank"] is None and "q4km_blog" in minilm["third_party"]
    # `canrun catalog --task` lists them, an unknown model_type as "?".
    result = run_canrun("catalog", "--task", "sentence-similarity")
    assert result.returncode == 0, result.stderr
    line = next(l for l in result.stdout.splitlines() if l.startswith("intfloat/e5-large-v2 "))
    assert line.split()[2] == "?"


@pytest.mark.skipif(not SNAPSHOT.is_file(), reason="the shared catalog snapshot is not beside the repository")
def test_build_catalog_names_a_bad_snapshot_in_one_line(tmp_path):
    bad = tmp_path / "encoders.jsonl"
    for content, expected in [(None, f"{bad}: cannot read: No such file or directory"),
                              ('{"id": "a"\n', f"{bad}:1: not JSON: "),
                              ('\n{"id": "a", "task": "text-ranking"}\n', f"{bad}:2: a record needs an 'id', a 'task'")]:
        if content is not None:
            bad.write_text(content)
        result = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "build_catalog.py"), "--encoders", str(bad),
                                 "--out", str(tmp_path / "out.jsonl")], capture_output=True, text=True, timeout=60)
        assert result.returncode == 1 and result.stderr.startswith(expected), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
