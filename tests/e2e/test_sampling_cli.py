"""`canrun generate` sampling flags end to end on the llama_f32 fixture, whose
generation_config.json says nothing about sampling (greedy): seeded runs repeat, the seed of an
unseeded run is reported and repeats it, bad values are usage errors naming the option, and a
generation_config.json that samples is followed unless --greedy."""
import json
import shutil

import pytest

from conftest import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"
GOLDEN = json.loads((REPO_ROOT / "tests" / "goldens" / "models" / "llama_f32.json").read_text())
CASE = next(c for c in GOLDEN["cases"] if c["prompt"] == "Hello world")
TOKENS = 16


def generate(run_canrun, *flags, model=FIXTURE):
    result = run_canrun("generate", model, "--prompt", CASE["prompt"], "-n", TOKENS, "--json", *flags)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def greedy_ids():
    return CASE["generated_ids"][:TOKENS]


def test_a_seed_repeats_the_same_text(run_canrun):
    first = generate(run_canrun, "--temperature", 0.7, "--seed", 1)
    second = generate(run_canrun, "--temperature", 0.7, "--seed", 1)
    assert first["text"] == second["text"] and first["generated_ids"] == second["generated_ids"]
    assert first["seed"] == 1
    assert first["generated_ids"] != greedy_ids()  # it sampled
    assert generate(run_canrun, "--temperature", 0.7, "--seed", 2)["generated_ids"] != first["generated_ids"]


def test_an_unseeded_run_reports_the_seed_that_repeats_it(run_canrun):
    first = generate(run_canrun, "--do-sample")
    assert isinstance(first["seed"], int)
    assert generate(run_canrun, "--do-sample", "--seed", first["seed"])["generated_ids"] == first["generated_ids"]


def test_plain_output_gives_the_seed_on_the_timing_line(run_canrun):
    result = run_canrun("generate", FIXTURE, "--prompt", "hi", "-n", 4, "--top-k", 5, "--seed", 123)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1].endswith("| seed 123")


def test_greedy_is_the_default_without_sampling_in_generation_config(run_canrun):
    default = generate(run_canrun)
    assert default["seed"] is None
    assert default["generated_ids"] == greedy_ids()
    assert generate(run_canrun, "--greedy")["generated_ids"] == default["generated_ids"]
    # top-k 1 keeps only the likeliest token: greedy again, though it samples.
    assert generate(run_canrun, "--top-k", 1, "--seed", 5, "--temperature", 1.7)["generated_ids"] == greedy_ids()


@pytest.mark.parametrize("flags, option", [
    (["--temperature", 0], "--temperature"),
    (["--temperature", -1], "--temperature"),
    (["--temperature", "nan"], "--temperature"),
    (["--top-p", 0], "--top-p"),
    (["--top-p", 1.5], "--top-p"),
    (["--top-k", -1], "--top-k"),
    (["--min-p", 1.5], "--min-p"),
    (["--repetition-penalty", 0], "--repetition-penalty"),
    (["--seed", -1], "--seed"),
    (["--greedy", "--do-sample"], "--do-sample"),
    (["--greedy", "--temperature", 0.7], "--greedy"),
])
def test_bad_values_are_usage_errors_naming_the_option(run_canrun, flags, option):
    result = run_canrun("generate", FIXTURE, "--prompt", "hi", "-n", 2, *flags)
    assert result.returncode == 2, result.stderr
    assert option in result.stderr


def test_temperature_zero_points_to_greedy(run_canrun):
    result = run_canrun("generate", FIXTURE, "--prompt", "hi", "--temperature", 0)
    assert result.returncode == 2 and "--greedy" in result.stderr


def _with_generation_config(tmp_path, **fields):
    model = tmp_path / "model"
    shutil.copytree(FIXTURE, model)
    config = json.loads((model / "generation_config.json").read_text())
    (model / "generation_config.json").write_text(json.dumps({**config, **fields}))
    return model


def test_a_sampling_generation_config_is_followed_unless_greedy(run_canrun, tmp_path):
    model = _with_generation_config(tmp_path, do_sample=True, temperature=1.5, top_k=0)
    sampled = generate(run_canrun, "--seed", 4, model=model)
    assert sampled["seed"] == 4 and sampled["generated_ids"] != greedy_ids()
    # The flags override the file: the same draws at its settings given as flags.
    assert generate(run_canrun, "--seed", 4, "--temperature", 1.5, "--top-k", 0)["generated_ids"] == \
        sampled["generated_ids"]
    greedy = generate(run_canrun, "--greedy", model=model)
    assert greedy["seed"] is None and greedy["generated_ids"] == greedy_ids()


def test_sampling_at_the_configs_temperature_zero_is_a_usage_error(run_canrun, tmp_path):
    model = _with_generation_config(tmp_path, do_sample=True, temperature=0.0)
    result = run_canrun("generate", model, "--prompt", "hi", "-n", 2)
    assert result.returncode == 2
    assert "temperature 0" in result.stderr and "--greedy" in result.stderr
    assert run_canrun("generate", model, "--prompt", "hi", "-n", 2, "--greedy").returncode == 0


def test_a_bad_sampling_field_names_the_file_and_field(run_canrun, tmp_path):
    model = _with_generation_config(tmp_path, top_p=1.5)
    result = run_canrun("generate", model, "--prompt", "hi", "-n", 2)
    assert result.returncode == 1
    assert "generation_config.json" in result.stderr and "'top_p'" in result.stderr


def test_help_describes_the_sampling_flags(run_canrun):
    result = run_canrun("generate", "--help")
    assert result.returncode == 0
    for flag in ("--temperature", "--top-k", "--top-p", "--min-p", "--repetition-penalty", "--seed", "--greedy",
                 "--do-sample"):
        assert flag in result.stdout
