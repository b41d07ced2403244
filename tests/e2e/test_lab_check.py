"""`canrun check`: a fixture folder and a Hugging Face cache snapshot give PASS rows with every
column filled honestly; a catalog id gives a synthetic row; errors name the option."""
import json
import os
import shlex
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"


@pytest.fixture
def lab_env(tmp_path):
    """An environment whose caches (synthetic weights, HF hub) live in the test's folder."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), HF_HUB_CACHE=str(tmp_path / "hub"))
    env.pop("CANRUN_CHECK_FAULT", None)
    env.pop("CANRUN_CACHE_DIR", None)
    return env


def check(canrun_bin, env, *args):
    result = subprocess.run([canrun_bin, "check", *map(str, args)], capture_output=True, text=True, env=env,
                            timeout=120)
    return result


def check_json(canrun_bin, env, *args):
    result = check(canrun_bin, env, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_fixture_folder_passes(canrun_bin, lab_env):
    row = check_json(canrun_bin, lab_env, FIXTURES / "llama_bf16")
    assert row["result"] == "PASS"
    assert row["weights"] == "real" and row["revision"] is None
    assert row["architecture"] == "llama" and row["task"] == "text-generation"
    assert row["cores"] == row["tp_degree"] == row["ep_degree"] == 1
    assert row["prompt"] == "The capital of France is"
    assert len(row["generated_token_ids"]) == 32 or row["generated_token_ids"][-1] == 2
    assert row["generated_token_ids"] == row["reference_token_ids"]
    assert row["matching_prefix_length"] == len(row["generated_token_ids"])
    assert isinstance(row["generated_text"], str)
    assert row["compile_time_s"] > 0 and row["recompilations"] == 0 and row["plan_cache_hit"] is False
    assert row["peak_activation_bytes"] > 0 and row["peak_device_memory_bytes"] is None
    assert 0 < row["load_time_s"] and row["load_time_s"] + row["compile_time_s"] <= row["wall_time_s"]
    assert row["peak_host_memory_bytes"] > 1 << 20
    assert row["error_type"] is None and row["error_message"] is None
    stack = {c["component"]: c["version"] for c in row["software_stack"]}
    assert {"canrun", "backend", "isa", "g++", "arrow", "onednn", "glibc", "os", "kernel", "cpu"} <= set(stack)
    assert row["library_version"] == "cpu-" + stack["isa"]
    assert row["compiler_version"] == "canrun-" + stack["canrun"].split()[0]
    assert f"build/canrun check {FIXTURES / 'llama_bf16'} --profile local --json" in row["reproduce_script"]
    assert row["run_command"] == f"build/canrun check {FIXTURES / 'llama_bf16'} --profile local"
    assert row["schema_version"] == 6 and row["reason_code"] is None and row["license"] is None
    assert row["tokens_match"] is True and row["first_divergence_step"] is None and row["judged_fluent"] is None
    assert row["plan_source"] == "built"
    assert 0 < row["warm_compile_time_s"]  # the plan taken from the cache by a second session
    assert row["planned_memory_bytes"] > 0 and row["memory_capacity_bytes"] > row["planned_memory_bytes"]


# Families with bf16, f16, f32, FP8 and packed int4/int8 weights, MXFP4 experts, a vision tower, recurrent state and
# per-layer inputs.
ESTIMATED = ["llama_bf16", "llama_f16", "llama_f32", "deepseek_v3_fp8", "gpt_oss_mxfp4", "qwen2_5_vl", "qwen3_next",
             "gemma4_text_ple", "llama_w4a16", "llama_gptq_int8"]


@pytest.mark.parametrize("name, quantization", [
    ("llama_w4a16", "compressed-tensors int4 (W4A16), group 32"),
    ("qwen2_w8a16", "compressed-tensors int8 (W8A16), per channel"),
    ("llama_gptq_int8", "gptq int8 (W8A16), per channel"),
    ("deepseek_v3_fp8", "fp8 e4m3, blocks 8x8"),
    ("gpt_oss_mxfp4", "mxfp4 experts"),
    ("llama_bf16", None),
])
def test_the_row_names_the_checkpoints_quantization(canrun_bin, lab_env, name, quantization):
    row = check_json(canrun_bin, lab_env, FIXTURES / name, "--no-record")
    assert row["result"] == "PASS" and row["quantization"] == quantization


@pytest.mark.parametrize("name", ESTIMATED)
def test_the_planners_estimate_is_the_peak_within_ten_percent(canrun_bin, lab_env, name):
    row = check_json(canrun_bin, lab_env, FIXTURES / name, "--no-record")
    assert row["result"] == "PASS", row["error_message"]
    assert 0.9 <= row["planned_memory_bytes"] / row["peak_host_memory_bytes"] <= 1.1, row


def test_the_row_is_recorded_by_default_and_read_back_as_yours(canrun_bin, lab_env, tmp_path):
    env = dict(lab_env, CANRUN_RESULTS=str(tmp_path / "mine"), CANRUN_DATASET=str(tmp_path / "shipped"))
    result = check(canrun_bin, env, FIXTURES / "qwen2")
    assert result.returncode == 0, result.stderr
    pair_files = list((tmp_path / "mine").glob("*.parquet"))
    assert len(pair_files) == 1 and f"row recorded in {pair_files[0]}" in result.stderr
    query = subprocess.run([canrun_bin, "query", "--format", "json"], capture_output=True, text=True, env=env)
    assert query.returncode == 0, query.stderr
    rows = json.loads(query.stdout)
    assert [(r["model_id"], r["yours"]) for r in rows] == [(str(FIXTURES / "qwen2"), True)]
    table = subprocess.run([canrun_bin, "query"], capture_output=True, text=True, env=env).stdout
    assert f"* {FIXTURES / 'qwen2'}"[:60] in table and "1 of them yours (marked *)" in table
    unrecorded = check(canrun_bin, dict(env, CANRUN_RESULTS=str(tmp_path / "none")), FIXTURES / "qwen2", "--no-record")
    assert unrecorded.returncode == 0 and not (tmp_path / "none").exists()
    assert "recorded" not in unrecorded.stderr


def test_the_run_command_repeats_the_row_from_a_clone(canrun_bin, lab_env):
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen3", "--no-record")
    command = row["run_command"]
    assert command.startswith("build/canrun check ")
    # As a user pastes it into a shell in the clone, with this test's binary standing in for build/canrun.
    line = shlex.quote(canrun_bin) + command[len("build/canrun"):] + " --json --no-record"
    again = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=lab_env, cwd=REPO_ROOT,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    repeated = json.loads(again.stdout)
    assert (repeated["result"], repeated["generated_token_ids"]) == (row["result"], row["generated_token_ids"])


def test_same_generations_as_canrun_generate(canrun_bin, lab_env):
    """The tested tokens are generate's on the compiled cpu backend, the reference tokens generate's on ref."""
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen2")
    for backend, column in (("cpu", "generated_token_ids"), ("ref", "reference_token_ids")):
        generated = subprocess.run([canrun_bin, "generate", FIXTURES / "qwen2", "--prompt", "The capital of France is",
                                    "--max-new-tokens", "32", "--backend", backend, "--json"],
                                   capture_output=True, text=True, check=True, env=lab_env)
        assert row[column] == json.loads(generated.stdout)["generated_ids"], backend


def test_second_check_loads_the_plan_from_the_cache_dir(canrun_bin, lab_env, tmp_path):
    plans = tmp_path / "plans"
    first = check_json(canrun_bin, lab_env, FIXTURES / "llama_bf16", "--cache-dir", plans)
    assert first["plan_cache_hit"] is False and first["recompilations"] == 0 and first["compile_time_s"] > 0
    assert any(plans.iterdir())
    assert not (tmp_path / "xdg" / "canrun" / "plans").exists()
    second = check_json(canrun_bin, lab_env, FIXTURES / "llama_bf16", "--cache-dir", plans)
    assert second["plan_cache_hit"] is True and second["recompilations"] == 0 and second["compile_time_s"] > 0
    assert second["result"] == "PASS"
    assert second["generated_token_ids"] == first["generated_token_ids"] == first["reference_token_ids"]
    assert "--cache-dir" not in second["reproduce_script"]
    assert (first["plan_source"], second["plan_source"]) == ("built", "local_cache")


def test_a_plan_pulled_from_a_shared_cache_says_so(canrun_bin, lab_env, tmp_path):
    built = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", "--cache-dir", tmp_path / "mine", "--no-record")
    for command in (["cache", "push", tmp_path / "shared", "--cache-dir", tmp_path / "mine"],
                    ["cache", "pull", tmp_path / "shared", "--cache-dir", tmp_path / "theirs"]):
        moved = subprocess.run([canrun_bin, *map(str, command)], capture_output=True, text=True, env=lab_env)
        assert moved.returncode == 0, moved.stderr
    pulled = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", "--cache-dir", tmp_path / "theirs", "--no-record")
    assert (pulled["plan_source"], pulled["plan_cache_hit"]) == ("remote_cache", True)
    assert pulled["generated_token_ids"] == built["generated_token_ids"]


def test_hub_id_from_the_cache_records_the_revision(canrun_bin, lab_env, tmp_path):
    repo = tmp_path / "hub" / "models--tiny-org--tiny-qwen3"
    commit = "c0ffee11" * 5
    shutil.copytree(FIXTURES / "qwen3", repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    row = check_json(canrun_bin, lab_env, "tiny-org/tiny-qwen3")
    assert row["result"] == "PASS"
    assert row["model_id"] == "tiny-org/tiny-qwen3"
    assert row["revision"] == commit and row["weights"] == "real"
    assert f"--revision {commit}" in row["reproduce_script"]


def test_the_steps_show_on_stderr_but_not_with_json(canrun_bin, lab_env, tmp_path):
    model = FIXTURES / "qwen2"
    result = check(canrun_bin, lab_env, model, "--cache-dir", tmp_path / "plans")
    assert result.returncode == 0, result.stderr
    steps = [line.split(": ", 1)[1].split(" (at ")[0] for line in result.stderr.splitlines()
             if line.startswith(f"check {model}: ")]
    assert steps[:3] == ["finding the model", "tested run (cpu): loading", "tested run (cpu): compiling"], steps
    assert any(step.startswith("compiling: packing weights 0/") for step in steps), steps
    assert steps[-4:] == ["tested run (cpu): generating 32 tokens",
                          "tested run (cpu): timing a warm start from the plan cache", "reference run (ref): loading",
                          "reference run (ref): generating 32 tokens"], steps
    quiet = check(canrun_bin, lab_env, model, "--json", "--cache-dir", tmp_path / "other-plans")
    assert quiet.returncode == 0 and "check " not in quiet.stderr, quiet.stderr


def test_human_summary_and_out_dir(canrun_bin, lab_env, tmp_path):
    result = check(canrun_bin, lab_env, FIXTURES / "qwen2", "--out", tmp_path / "results")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith(": PASS")
    files = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert "README.md" in files and any(f.endswith(".parquet") for f in files)


def test_unknown_model_names_where_it_looked(canrun_bin, lab_env):
    result = check(canrun_bin, lab_env, "no-such-folder")
    assert result.returncode == 2
    assert "MODEL 'no-such-folder'" in result.stderr and "Hugging Face cache" in result.stderr


def test_unsupported_architecture_in_a_folder_is_a_row(canrun_bin, lab_env, tmp_path):
    folder = tmp_path / "frobnicator"
    shutil.copytree(FIXTURES / "qwen2", folder)
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "frobnicator"
    del config["architectures"]  # Qwen2ForCausalLM would load it as qwen2
    (folder / "config.json").write_text(json.dumps(config))
    row = check_json(canrun_bin, lab_env, folder)
    assert row["result"] == "UNSUPPORTED_ARCHITECTURE"
    assert "frobnicator" in row["error_message"] and row["load_time_s"] is None
    assert row["weights"] is None and row["wall_time_s"] is None  # nothing ran


DEEP = "[" * 100000 + "]" * 100000


@pytest.mark.parametrize("name", ["config.json", "generation_config.json", "tokenizer.json"])
def test_input_past_a_limit_is_a_fail_load_row(canrun_bin, lab_env, tmp_path, name):
    """A file nested 100,000 levels deep once killed the check with a stack overflow, so no row
    was written; now it is a FAIL_LOAD row naming the file and the limit."""
    folder = tmp_path / "deep"
    shutil.copytree(FIXTURES / "qwen2", folder)
    if name == "config.json":
        config = json.loads((folder / name).read_text())
        (folder / name).write_text(json.dumps(config)[:-1] + ', "x": ' + DEEP + "}")
    else:
        (folder / name).write_text('{"x": ' + DEEP + "}")
    row = check_json(canrun_bin, lab_env, folder)
    assert row["result"] == "FAIL_LOAD", row
    assert f"{folder / name}: nested deeper than 64 levels" in row["error_message"]


def test_unparsable_plan_cache_entry_is_rebuilt(canrun_bin, lab_env, tmp_path):
    cache = tmp_path / "plans"
    assert check_json(canrun_bin, lab_env, FIXTURES / "qwen2", "--cache-dir", cache)["result"] == "PASS"
    manifests = list(cache.glob("*/*/manifest.json"))
    assert manifests
    for manifest in manifests:
        manifest.write_text(DEEP)
    listed = subprocess.run([canrun_bin, "cache", "ls", "--cache-dir", cache], capture_output=True, text=True)
    assert listed.returncode == 0 and listed.stdout.count("nested deeper than 64 levels") == len(manifests)
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", "--cache-dir", cache)
    assert row["result"] == "PASS" and row["plan_cache_hit"] is False
    assert "nested deeper" not in subprocess.run([canrun_bin, "cache", "ls", "--cache-dir", cache],
                                                 capture_output=True, text=True).stdout


def test_model_too_large_for_the_profile_is_not_tested(canrun_bin, lab_env, tmp_path):
    profiles = tmp_path / "profiles.json"
    # One core of the two_cores profile below: it takes two of them.
    profiles.write_text(json.dumps({"profiles": [{"name": "tiny", "cores": 1, "memory_per_core": "40.54 MiB"}]}))
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", "--profiles", profiles, "--profile", "tiny")
    assert row["result"] == "NOT_TESTED" and row["reason_code"] == "needs_memory"
    assert row["error_message"].startswith("needs more than 1 core of tiny")
    assert "more than it has" in row["error_message"]
    assert "; 2 cores of 40.5 MiB would hold it (tensor parallel over MPI)" in row["error_message"]
    assert row["generated_token_ids"] is None and row["cores"] is None
    # Nothing ran: no weights kind, time or memory measured.
    assert row["weights"] is None and row["wall_time_s"] is None and row["peak_host_memory_bytes"] is None
    assert row["memory_capacity_bytes"] == int(40.54 * (1 << 20)) < row["planned_memory_bytes"]


def test_no_plan_cache(canrun_bin, lab_env, tmp_path):
    # The warm start is timed from a cache folder of the check's own, gone with it.
    env = dict(lab_env, TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    row = check_json(canrun_bin, env, FIXTURES / "qwen2", "--no-plan-cache")
    assert row["result"] == "PASS" and row["compile_time_s"] > 0 and row["plan_cache_hit"] is None
    assert row["plan_source"] == "built" and row["warm_compile_time_s"] > 0
    assert not (tmp_path / "xdg" / "canrun" / "plans").exists() and not any((tmp_path / "tmp").iterdir())
    both = check(canrun_bin, lab_env, FIXTURES / "qwen2", "--no-plan-cache", "--cache-dir", tmp_path / "plans")
    assert both.returncode == 2 and "--cache-dir has no effect with --no-plan-cache" in both.stderr


def test_compile_failure_is_a_fail_compile_row(canrun_bin, lab_env, tmp_path):
    not_a_folder = tmp_path / "plans"
    not_a_folder.write_text("a file where the plan cache should be")
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", "--cache-dir", not_a_folder)
    assert row["result"] == "FAIL_COMPILE"
    assert str(not_a_folder) in row["error_message"]
    assert row["load_time_s"] > 0 and row["compile_time_s"] is None and row["generated_token_ids"] is None


@pytest.fixture
def two_cores(tmp_path):
    """--profiles/--profile arguments on which the planner puts the qwen2 and mixtral fixtures on
    2 of 4 cores: every core carries the check process's own 40 MiB and the whole embeddings,
    and 40.54 MiB holds the rest with half of the layers but not all of them."""
    profiles = tmp_path / "two-cores.json"
    profiles.write_text(json.dumps({"profiles": [{"name": "two", "cores": 4, "memory_per_core": "40.54 MiB"}]}))
    return ["--profiles", profiles, "--profile", "two"]


def test_model_needing_two_cores_runs_sharded(canrun_bin, lab_env, tmp_path, two_cores):
    plans = tmp_path / "plans"
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", *two_cores, "--cache-dir", plans)
    assert row["result"] == "PASS", row["error_message"]
    assert (row["cores"], row["tp_degree"], row["ep_degree"]) == (2, 2, 1)
    assert row["generated_token_ids"] == row["reference_token_ids"]
    assert row["generated_token_ids"] == check_json(canrun_bin, lab_env, FIXTURES / "qwen2")["generated_token_ids"]
    assert row["compile_time_s"] > 0 and row["plan_cache_hit"] is False and row["recompilations"] == 0
    assert row["load_time_s"] > 0 and row["peak_activation_bytes"] > 0 and row["peak_host_memory_bytes"] > 1 << 20
    assert "--profile two" in row["reproduce_script"]
    assert len(list(plans.glob("*/*/manifest.json"))) == 4  # weights and graphs, one of each per shard
    again = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", *two_cores, "--cache-dir", plans)
    assert again["plan_cache_hit"] is True and again["generated_token_ids"] == row["generated_token_ids"]


def test_mixture_of_experts_needing_two_cores_runs_expert_parallel(canrun_bin, lab_env, two_cores):
    row = check_json(canrun_bin, lab_env, FIXTURES / "mixtral", *two_cores)
    assert row["result"] == "PASS", row["error_message"]
    assert (row["cores"], row["ep_degree"]) == (2, 2)
    assert row["generated_token_ids"] == row["reference_token_ids"]


def test_failure_inside_a_worker_is_that_workers_row(canrun_bin, lab_env, tmp_path, two_cores):
    not_a_folder = tmp_path / "plans"
    not_a_folder.write_text("a file where the plan cache should be")
    row = check_json(canrun_bin, lab_env, FIXTURES / "qwen2", *two_cores, "--cache-dir", not_a_folder)
    assert row["result"] == "FAIL_COMPILE"
    assert row["error_message"].startswith("rank ") and " of 2: " in row["error_message"]
    assert str(not_a_folder) in row["error_message"]
    assert row["load_time_s"] > 0 and row["compile_time_s"] is None and row["generated_token_ids"] is None


def test_crashing_worker_is_a_fail_runtime_row(canrun_bin, lab_env, two_cores):
    env = dict(lab_env, CANRUN_CHECK_FAULT="crash")
    row = check_json(canrun_bin, env, FIXTURES / "qwen2", *two_cores)
    assert row["result"] == "FAIL_RUNTIME" and row["error_type"] == "workers_failed"
    assert "the 2 workers of the sharded run (mpirun) ended with status" in row["error_message"]
    assert "signal 6" in row["error_message"]  # mpirun's own words about the aborted rank
    assert row["generated_token_ids"] is None


def test_family_that_cannot_be_sharded_is_not_tested_when_one_core_cannot_hold_it(canrun_bin, lab_env, two_cores):
    row = check_json(canrun_bin, lab_env, FIXTURES / "olmo2", *two_cores)
    assert row["result"] == "NOT_TESTED" and row["cores"] is None and row["reason_code"] == "cannot_shard"
    assert row["memory_capacity_bytes"] == int(40.54 * (1 << 20))  # the one core it was planned on
    assert row["error_message"].startswith("cannot be split, and needs more than 1 core of two (")
    assert "olmo2 normalises q and k over the whole projection width" in row["error_message"]


def write_check_image(path):
    """canrun's check image (lab/tested_run.cpp, check_image) as an RGB PNG, written with zlib."""
    import struct
    import zlib
    rows = b""
    for y in range(48):
        row = bytearray([0])  # filter: none
        for x in range(64):
            square = 20 <= x < 36 and 12 <= y < 28
            row += bytes((250, 240, 30) if square else (x * 4 % 256, y * 5 % 256, (255 - x * 2 - y) % 256))
        rows += bytes(row)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 48, 8, 2, 0, 0, 0)) +
                     chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("name", ["qwen3_vl", "qwen2_5_vl"])
def test_image_text_to_text_check_asks_about_the_check_image(canrun_bin, lab_env, tmp_path, name):
    row = check_json(canrun_bin, lab_env, FIXTURES / name)
    assert row["result"] == "PASS" and row["task"] == "image-text-to-text"
    assert row["prompt"].startswith("the check image (64x48, canrun's) and \"Describe this image.\"")
    # The same tokens as generate with that image and instruction, on each backend.
    image = tmp_path / "check.png"
    write_check_image(image)
    for backend, column in (("cpu", "generated_token_ids"), ("ref", "reference_token_ids")):
        generated = subprocess.run([canrun_bin, "generate", FIXTURES / name, "--image", image, "--prompt",
                                    "Describe this image.", "--backend", backend, "--json"],
                                   capture_output=True, text=True, check=True, env=lab_env)
        assert row[column] == json.loads(generated.stdout)["generated_ids"], backend


ENCODER_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "encoders"


def test_embedding_model_is_checked_by_the_cosine_of_its_embeddings(canrun_bin, lab_env, tmp_path):
    row = check_json(canrun_bin, lab_env, ENCODER_FIXTURES / "roberta_cls_dense", "--cache-dir", tmp_path / "plans")
    assert row["result"] == "PASS", row["error_message"]
    assert row["task"] == "sentence-similarity" and row["architecture"] == "roberta"
    assert row["verification"] == "cosine" and 0.99999 <= row["min_cosine"] <= 1 + 1e-9
    assert row["max_score_difference"] is None and row["sentences_per_s"] > 0
    assert row["generated_token_ids"] is None and row["tokens_match"] is None
    assert row["prompt"].startswith("8 fixed sentences")
    assert row["plan_source"] == "built" and row["compile_time_s"] > 0 and row["schema_version"] == 6


def test_cross_encoder_is_checked_by_its_ranking(canrun_bin, lab_env, tmp_path):
    row = check_json(canrun_bin, lab_env, ENCODER_FIXTURES / "xlm_roberta_cross_encoder", "--cache-dir",
                     tmp_path / "plans")
    assert row["result"] == "PASS", row["error_message"]
    assert row["task"] == "text-ranking" and row["verification"] == "scores"
    assert 0 <= row["max_score_difference"] <= 1e-4 and row["min_cosine"] is None
    assert "How many people live in Berlin?" in row["prompt"]


def test_synthetic_encoder_from_the_catalog_and_its_errors(canrun_bin, lab_env, tmp_path):
    """The shipped catalog's cross-encoder on synthetic weights; a pooling mode synthetic weights
    cannot make is the row's error, naming the field."""
    row = check_json(canrun_bin, lab_env, "cross-encoder/ms-marco-MiniLM-L6-v2", "--synthetic", "--no-record",
                     "--cache-dir", tmp_path / "plans")
    assert row["result"] == "PASS" and row["weights"] == "synthetic", row["error_message"]
    assert row["task"] == "text-ranking" and row["max_score_difference"] <= 1e-4
    folder = tmp_path / "xdg" / "canrun" / "synthetic" / "cross-encoder-ms-marco-MiniLM-L6-v2"
    assert (folder / "tokenizer.json").is_file() and not (folder / "modules.json").exists()
    catalog = [json.loads(line) for line in (REPO_ROOT / "data" / "catalog.jsonl").read_text().splitlines()]
    minilm = next(r for r in catalog if r["id"] == "sentence-transformers/all-MiniLM-L6-v2")
    minilm["sentence_transformers"]["pooling"]["mode"] = "weightedmean"
    bad = tmp_path / "catalog.jsonl"
    bad.write_text(json.dumps(minilm) + "\n")
    row = check_json(canrun_bin, lab_env, minilm["id"], "--synthetic", "--no-record", "--catalog", bad)
    assert row["result"] == "FAIL_LOAD"
    assert "field 'sentence_transformers.pooling.mode': 'weightedmean'" in row["error_message"]


def test_text_classification_has_no_protocol_yet(canrun_bin, lab_env, tmp_path):
    """A classifier's task has no check protocol: NOT_TESTED with its reason code, nothing run."""
    config = json.loads((ENCODER_FIXTURES / "bert_cross_encoder" / "config.json").read_text())
    entry = {"id": "test/classifier", "task": "text-classification", "model_type": "bert", "config": config,
             "popularity": {"downloads": {"rank": None, "note": "none"}, "trending": {"rank": None, "note": "none"}},
             "selected": False, "exclusion": "not prioritized yet"}
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(json.dumps(entry) + "\n")
    row = check_json(canrun_bin, lab_env, "test/classifier", "--synthetic", "--no-record", "--catalog", catalog)
    assert (row["result"], row["reason_code"], row["task"]) == ("NOT_TESTED", "no_protocol", "text-classification")
    assert "no check protocol for text-classification" in row["error_message"]
    assert row["weights"] is None and row["wall_time_s"] is None
