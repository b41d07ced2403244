"""Every numeric option is read one way (src/cli/option_checks.h): NaN, infinities, empty values,
negative unsigned values and list items left empty are usage errors naming the option, in the
one-line `error: ...` form of every other error, before anything runs; file options refuse a FIFO
instead of blocking on it; a mistyped local folder is not sent to the Hub."""
import os
import subprocess

import pytest

from conftest import REPO_ROOT

MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"

# (arguments before the option, option): one per option kind and subcommand.
NUMERIC_OPTIONS = [
    (["generate", MODEL, "--prompt", "hi"], "--max-new-tokens"),
    (["generate", MODEL, "--prompt", "hi"], "--temperature"),
    (["generate", MODEL, "--prompt", "hi"], "--top-p"),
    (["generate", MODEL, "--prompt", "hi"], "--repetition-penalty"),
    (["bench", MODEL], "--requests"),
    (["bench", MODEL], "--price-per-hour"),
    (["bench", "--endpoint", "http://127.0.0.1:9"], "--request-rate"),
    (["bench", "--endpoint", "http://127.0.0.1:9"], "--timeout"),
    (["serve"], "--reload-interval"),
    (["serve"], "--header-timeout"),
    (["serve", MODEL], "--max-body-mib"),
    (["serve", MODEL], "--request-timeout"),
    (["sweep", "--out", "/nonexistent"], "--timeout"),
    (["cache", "prune", "--dry-run"], "--older-than"),
    (["cache", "prune", "--dry-run"], "--max-size-mib"),
]


def run(canrun_bin, *args, cwd=None, env=None):
    return subprocess.run([canrun_bin, *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env=env)


def assert_usage_error(result, *fragments):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], result.stderr


@pytest.mark.parametrize("prefix,option", NUMERIC_OPTIONS, ids=[f"{p[0]} {o}" for p, o in NUMERIC_OPTIONS])
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-infinity", "", "1e999", "12abc"])
def test_a_number_that_bounds_nothing_is_refused_by_name(canrun_bin, prefix, option, value):
    assert_usage_error(run(canrun_bin, *prefix, option, value), f"error: {option}: ")


@pytest.mark.parametrize("args", [["generate", MODEL, "--prompt", "hi", "--seed"], ["bench", MODEL, "--seed"]])
def test_a_negative_seed_is_refused_not_wrapped(canrun_bin, args):
    assert_usage_error(run(canrun_bin, *args, "-1"), "--seed: '-1' must not be negative")


@pytest.mark.parametrize("value", ["1,2,", ",1", "1,,2"])
def test_a_list_with_an_empty_item_is_refused(canrun_bin, value):
    result = run(canrun_bin, "bench", "--endpoint", "http://127.0.0.1:9", "--sweep-concurrency", value)
    assert_usage_error(result, "--sweep-concurrency: ", "has an empty item")
    result = run(canrun_bin, "generate", MODEL, "--prompt", "hi", "--dump", "/tmp/x", "--dump-steps", value)
    assert_usage_error(result, "--dump-steps: ", "has an empty item")


def test_a_list_item_out_of_range_is_named(canrun_bin):
    result = run(canrun_bin, "bench", "--endpoint", "http://127.0.0.1:9", "--sweep-concurrency", "1,2000")
    assert_usage_error(result, "--sweep-concurrency: ", "2000")


@pytest.mark.parametrize("value", ["", "nan GiB", "16 parsecs", "1e30 TiB"])
def test_the_memory_limit_names_its_option(canrun_bin, value):
    assert_usage_error(run(canrun_bin, "sweep", "--out", "/nonexistent", "--memory-limit", value),
                       "error: --memory-limit: ")


def test_parse_errors_are_one_error_line(canrun_bin):
    assert_usage_error(run(canrun_bin, "generate", MODEL, "--no-such-flag"), "--no-such-flag")
    assert_usage_error(run(canrun_bin, "no-such-command"), "no-such-command")
    assert run(canrun_bin, "--help").returncode == 0


@pytest.mark.parametrize("args", [["check", MODEL], ["sweep", "--out", "/nonexistent"], ["catalog"],
                                  ["archs"]])
def test_a_fifo_given_as_the_catalog_is_refused_not_waited_on(canrun_bin, tmp_path, args):
    fifo = tmp_path / "catalog.jsonl"
    os.mkfifo(fifo)
    assert_usage_error(run(canrun_bin, *args, "--catalog", fifo), "--catalog: ", "not a regular file")


def test_a_fifo_as_the_catalog_variable_is_refused_not_waited_on(canrun_bin, tmp_path):
    fifo = tmp_path / "catalog.jsonl"
    os.mkfifo(fifo)
    result = run(canrun_bin, "catalog", env={**os.environ, "CANRUN_CATALOG": str(fifo)})
    assert result.returncode == 1 and f"{fifo}: not a regular file" in result.stderr, result.stderr


def test_a_mistyped_local_folder_is_not_sent_to_the_hub(canrun_bin, tmp_path):
    (tmp_path / "models" / "SmolLM2-135M-Instruct").mkdir(parents=True)
    result = run(canrun_bin, "generate", "models/SmolLM2", "--prompt", "hi", cwd=tmp_path,
                 env={**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert_usage_error(result, "models/SmolLM2: no such folder (models/ is a folder here; `canrun pull models/SmolLM2`")
