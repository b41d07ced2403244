"""`canrun report` on two real `canrun bench --json` results (the ref backend as the current
platform, the compiled cpu backend as the candidate) of a tiny fixture."""
import json

import pytest

from conftest import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen2"


@pytest.fixture(scope="module")
def benches(run_canrun, tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    paths = {}
    for backend in ["ref", "cpu"]:
        result = run_canrun("bench", FIXTURE, "--backend", backend, "--prompt-tokens", "32", "--output-tokens", "8",
                            "--requests", "2", "--price-per-hour", "1.5", "--json")
        assert result.returncode == 0, result.stderr
        paths[backend] = folder / f"{backend}.json"
        paths[backend].write_text(result.stdout)
    return folder, paths


def test_markdown_compares_and_says_go(run_canrun, benches):
    _, paths = benches
    result = run_canrun("report", paths["ref"], paths["cpu"], "--stop", "failure_rate<0.5%,p95_ttft<10s")
    assert result.returncode == 0, result.stderr
    assert "| throughput (generated tokens/s) (throughput) |" in result.stdout
    candidate = json.loads(paths["cpu"].read_text())
    assert f"${candidate['cost_per_million_generated_tokens']:.4g}" in result.stdout
    assert result.stdout.rstrip().endswith("**GO: every stop condition holds for the candidate**")


def test_html_file_and_no_go_exit(run_canrun, benches):
    folder, paths = benches
    out = folder / "report.html"
    result = run_canrun("report", paths["ref"], paths["cpu"], "--stop", "throughput>1e12", "--format", "html",
                        "--out", out, "--fail-on-no-go")
    assert result.returncode == 1
    assert "NO-GO: report written to" in result.stdout
    assert "NO-GO: a stop condition failed (--fail-on-no-go)" in result.stderr
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "<svg" in page and "throughput&gt;1e12" in page


def test_bad_inputs_name_what_is_wrong(run_canrun, benches):
    folder, paths = benches
    broken = folder / "broken.json"
    broken.write_text(json.dumps({"throughput_tokens_per_s": 5}))
    result = run_canrun("report", paths["ref"], broken)
    assert result.returncode == 2
    assert f"{broken}: field 'first_token_s.p50' is missing or not a number" in result.stderr
    result = run_canrun("report", paths["ref"], paths["cpu"], "--stop", "p95_ttft<1GB")
    assert result.returncode == 2 and "p95_ttft takes the units ms, s, us, min or x (a multiple of the current's), not 'GB'" in result.stderr
    result = run_canrun("report", paths["ref"], folder / "missing.json")
    assert result.returncode == 2 and "missing.json" in result.stderr
    result = run_canrun("report", paths["ref"], paths["cpu"], "--lab-current", "a__b")
    assert result.returncode == 2 and "--lab-current and --lab-candidate go together" in result.stderr
    result = run_canrun("report", paths["ref"], paths["cpu"], "--lab-data", folder, "--lab-current", "a__b",
                        "--lab-candidate", "c__d")
    assert result.returncode == 2 and "--lab-current a__b: no such version pair" in result.stderr
