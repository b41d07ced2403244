"""The compile step through `canrun generate --backend cpu`: the first run builds the plan, the
next loads it from the plan cache with the same output; plans pushed by one machine make the
first run of another warm; bad compile options are usage errors."""
import json
import subprocess

import pytest

from conftest import REPO_ROOT

MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3_bf16"


def generate(run_canrun, cache, *args):
    result = run_canrun("generate", MODEL, "--prompt", "hello world", "-n", "6", "--backend", "cpu", "--json",
                        "--top-logits", "5", "--cache-dir", cache, *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_second_run_loads_the_plan_with_the_same_output(run_canrun, tmp_path):
    cache = tmp_path / "plans"
    cold = generate(run_canrun, cache)
    warm = generate(run_canrun, cache)
    assert cold["plan"]["compilations"] == 2 and cold["plan"]["plan_cache_hits"] == 0
    assert warm["plan"]["compilations"] == 0 and warm["plan"]["plan_cache_hits"] == 2
    assert warm["generated_ids"] == cold["generated_ids"]
    assert warm["prompt_top_logits"] == cold["prompt_top_logits"]
    assert cold["timings"]["compile_s"] > 0 and cold["timings"]["recompilations"] == 0
    assert cold["timings"]["start_to_first_token_s"] >= cold["timings"]["prefill_s"]
    reference = run_canrun("generate", MODEL, "--prompt", "hello world", "-n", "6", "--json")
    assert json.loads(reference.stdout)["generated_ids"] == cold["generated_ids"]

    listing = json.loads(run_canrun("cache", "ls", "--json", "--verify", "--cache-dir", cache, check=True).stdout)
    entries = listing["entries"]
    assert sorted(entry["key"]["kind"] for entry in entries) == ["graph", "weights"]
    assert all(entry["ok"] and entry["label"] == "qwen3_bf16" for entry in entries)
    assert [e["key"]["shapes"] for e in entries if e["key"]["kind"] == "graph"] == ["prefill=16;cache=32"]


def test_a_cold_compile_says_what_it_does_and_a_warm_one_says_nothing(run_canrun, tmp_path):
    args = ("generate", MODEL, "--prompt", "hello world", "-n", "2", "--cache-dir", tmp_path / "plans")
    cold = run_canrun(*args)
    assert cold.returncode == 0, cold.stderr
    assert any(line.startswith("generate: compiling: packing weights 0/") for line in cold.stderr.splitlines())
    assert any(line.startswith("generate: compiling: tuning the products of a 16-token prompt 0/")
               for line in cold.stderr.splitlines()), cold.stderr
    warm = run_canrun(*args)
    assert warm.returncode == 0 and "generate:" not in warm.stderr, warm.stderr
    quiet = run_canrun(*args[:-1], tmp_path / "other-plans", "--json")
    assert quiet.returncode == 0 and "generate:" not in quiet.stderr, quiet.stderr


def test_a_longer_prompt_compiles_its_own_bucket(run_canrun, tmp_path):
    cache = tmp_path / "plans"
    generate(run_canrun, cache)
    longer = run_canrun("generate", MODEL, "--prompt", "hello world " * 12, "-n", "4", "--backend", "cpu", "--json",
                        "--cache-dir", cache)
    result = json.loads(longer.stdout)
    prompt_tokens = len(result["prompt_ids"])
    bucket = next(b for b in (16, 32, 64, 128) if b >= prompt_tokens)
    assert bucket > 16 and result["plan"]["buckets"] == [bucket]
    # The packed weights came from the cache; only the new bucket's graph was built.
    assert result["plan"]["compilations"] == 1 and result["plan"]["plan_cache_hits"] == 1


def test_pushed_plans_make_another_cache_warm(run_canrun, tmp_path):
    first, second, shared = tmp_path / "a", tmp_path / "b", tmp_path / "shared"
    cold = generate(run_canrun, first)
    run_canrun("cache", "push", shared, "--cache-dir", first, check=True)
    run_canrun("cache", "pull", shared, "--cache-dir", second, check=True)
    warm = generate(run_canrun, second)
    assert warm["plan"]["plan_cache_hits"] == 2 and warm["generated_ids"] == cold["generated_ids"]


def test_no_plan_cache_writes_nothing(run_canrun, tmp_path):
    result = run_canrun("generate", MODEL, "--prompt", "hi", "-n", "2", "--backend", "cpu", "--json",
                        "--no-plan-cache")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plan"]["compilations"] == 2


@pytest.mark.parametrize("args, words", [
    (["--backend", "cpu", "--buckets", "0,8"], "--buckets '0,8'"),
    (["--backend", "cpu", "--buckets", "2"], "longer than the largest prompt bucket, 2"),
    (["--backend", "ref", "--cache-dir", "x"], "--cache-dir has no effect with the ref backend"),
    (["--backend", "cpu", "--no-compile", "--no-plan-cache"], "--no-plan-cache has no effect with --no-compile"),
])
def test_bad_compile_options_are_usage_errors(run_canrun, args, words):
    result = run_canrun("generate", MODEL, "--prompt", "hello world", "-n", "2", *args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr


def test_a_full_cache_disk_costs_the_cache_not_the_run(canrun_bin, tmp_path):
    """The cache on a 64 KiB file system (a tmpfs of a private mount namespace): the packed
    weights do not fit. The run warns naming the cache folder, compiles without the cache and
    generates what a run without a cache does; no temporary entry is left filling the disk."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f'mount -t tmpfs -o size=64k canrun-full "{disk}" && '
              f'"{canrun_bin}" generate "{MODEL}" --prompt "hello world" -n 6 --json --cache-dir "{disk}/plans"; '
              f'status=$?; find "{disk}" -name "*.tmp-*" | sed "s/^/left behind: /" >&2; exit $status')
    result = subprocess.run(["unshare", "--map-root-user", "--mount", "sh", "-c", script], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert f"warning: plan cache {disk}/plans: " in result.stderr
    assert "No space left on device; compiling without the cache" in result.stderr
    assert "left behind: " not in result.stderr, result.stderr
    uncached = subprocess.run([canrun_bin, "generate", MODEL, "--prompt", "hello world", "-n", "6", "--json",
                               "--no-plan-cache"], capture_output=True, text=True, timeout=600, check=True)
    assert json.loads(result.stdout)["generated_ids"] == json.loads(uncached.stdout)["generated_ids"]
