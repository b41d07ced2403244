"""`--cores N`: every tiny fixture whose family shards, run over 2 and 4 worker processes,
agrees with the one-process `ref` run: token-exact, or by the top-5 rule of src/lab/verify.h
(at the first differing position each side's token is among the other's 5 most likely)."""
import json

import pytest

from conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"
# Families with a q/k norm over the whole projection width cannot be split.
UNSHARDABLE = {"olmo2", "olmo3", "olmoe", "minimax_m2"}
PROMPT = "The quick brown fox jumps over"
NEW_TOKENS = 12


def model_type(path):
    return json.loads((path / "config.json").read_text())["model_type"]


FIXTURE_NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "config.json").is_file())
SHARDABLE = [name for name in FIXTURE_NAMES if model_type(FIXTURES / name) not in UNSHARDABLE]
UNSHARDABLE_NAMES = [name for name in FIXTURE_NAMES if model_type(FIXTURES / name) in UNSHARDABLE]


def generate(run_canrun, name, *args):
    result = run_canrun("generate", FIXTURES / name, "--prompt", PROMPT, "--max-new-tokens", NEW_TOKENS,
                        "--json", "--top-logits", 5, *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def assert_agrees(tested, reference):
    mine, theirs = tested["generated_ids"], reference["generated_ids"]
    i = 0
    while i < min(len(mine), len(theirs)) and mine[i] == theirs[i]:
        i += 1
    if i == len(mine) == len(theirs):
        return
    assert i < min(len(mine), len(theirs)), f"lengths {len(mine)} and {len(theirs)} agree on the first {i}"
    assert mine[i] in reference["generated_top_ids"][i] and theirs[i] in tested["generated_top_ids"][i], (
        f"position {i}: token {mine[i]}, reference {theirs[i]}, not in each other's top-5")


@pytest.fixture(scope="module")
def reference(run_canrun):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = generate(run_canrun, name, "--cores", 1, "--backend", "ref")
        return cache[name]
    return get


def test_most_fixtures_shard():
    assert len(SHARDABLE) >= 30 and UNSHARDABLE_NAMES


@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize("name", SHARDABLE)
def test_sharded_agrees_with_reference(run_canrun, reference, name, cores):
    out = generate(run_canrun, name, "--cores", cores)
    assert out["cores"] == cores
    assert len(out["generated_top_ids"]) == len(out["generated_ids"])
    assert_agrees(out, reference(name))


@pytest.mark.parametrize("name", ["llama_bf16", "qwen3_moe", "gpt_neox", "phi3", "deepseek_v2"])
def test_sharded_cpu_backend_agrees_with_reference(run_canrun, reference, name):
    out = generate(run_canrun, name, "--cores", 2, "--backend", "cpu")
    assert out["backend"] == "cpu" and out["cores"] == 2
    assert_agrees(out, reference(name))


def test_only_rank_zero_prints(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", PROMPT, "--max-new-tokens", 4,
                        "--cores", 2)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 1
    assert sum("peak RSS" in line for line in result.stderr.splitlines()) == 1


@pytest.mark.parametrize("name", UNSHARDABLE_NAMES)
def test_unshardable_family_is_a_clear_error(run_canrun, name):
    result = run_canrun("generate", FIXTURES / name, "--prompt", PROMPT, "--cores", 2)
    assert result.returncode != 0
    assert model_type(FIXTURES / name) in result.stderr and "--cores 1" in result.stderr


def test_zero_cores_is_a_usage_error(run_canrun):
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", PROMPT, "--cores", 0)
    assert result.returncode == 2
    assert "--cores" in result.stderr


def test_worker_failure_fails_the_command(run_canrun):
    # The prompt plus 10^6 new tokens exceed max_position_embeddings: every worker refuses it.
    result = run_canrun("generate", FIXTURES / "llama_f32", "--prompt", PROMPT, "--max-new-tokens", 1000000,
                        "--cores", 2)
    assert result.returncode != 0
    assert "max_position_embeddings" in result.stderr and "rank" in result.stderr


def test_bench_reports_cores(run_canrun):
    result = run_canrun("bench", FIXTURES / "llama_f32", "--json", "--cores", 2, "--prompt-tokens", 8,
                        "--output-tokens", 4, "--requests", 2, "--warmup", 0)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["cores"] == 2 and report["generated_tokens"] == 2 * 4 and report["failures"] == 0


def test_bench_sharded_needs_concurrency_one(run_canrun):
    result = run_canrun("bench", FIXTURES / "llama_f32", "--cores", 2, "--concurrency", 2)
    assert result.returncode == 2
    assert "--concurrency" in result.stderr
