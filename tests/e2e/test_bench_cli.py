"""`canrun bench`: the measurements over a workload, their JSON and table forms, and bad input."""
import json

import pytest

from conftest import REPO_ROOT

MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"  # max_position_embeddings 128
VISION_MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3_vl"
IMAGES = REPO_ROOT / "tests" / "fixtures" / "images"
IMAGE = IMAGES / "rgb_37x53.jpg"


def bench_json(run_canrun, *args, model=MODEL):
    result = run_canrun("bench", model, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_json_measures_every_request_of_the_workload(run_canrun):
    report = bench_json(run_canrun, "--backend", "ref", "--prompt-tokens", "8-16", "--output-tokens", "5",
                        "--requests", "3", "--warmup", "1", "--concurrency", "2", "--threads", "2",
                        "--prefill-chunk", "5", "--price-per-hour", "3.6")
    assert report["architecture"] == "llama" and report["weights_dtype"] == "F32"
    assert report["workload"] == {"prompt_tokens": "8-16", "output_tokens": "5", "requests": 3, "warmup": 1,
                                  "concurrency": 2, "prefill_chunk": 5, "seed": 0, "kv_dtype": "f32", "prompt_file": None,
                                  "images": [], "image_tokens": 0}
    assert report["vision_s"] is None
    assert report["threads"] == 2 and "threads_per_request" not in report
    assert report["failures"] == 0 and report["errors"] == []
    assert report["generated_tokens"] == 3 * 5  # no eos stops a bench request
    assert 3 * 8 <= report["prompt_tokens"] <= 3 * 16
    first, latency = report["first_token_s"], report["token_latency_s"]
    assert first["count"] == 3 and latency["count"] == 3 * 4
    for summary in (first, latency):
        assert 0 < summary["p50"] <= summary["p95"] <= summary["max"]
    assert report["load_s"] > 0 and report["wall_s"] > 0 and report["peak_rss_bytes"] > 0
    assert report["throughput_tokens_per_s"] == pytest.approx(report["generated_tokens"] / report["wall_s"])
    assert report["prefill_tokens_per_s"] > 0 and report["decode_tokens_per_s"] > 0
    # $3.60 an hour is $0.001 a second.
    assert report["cost_per_million_generated_tokens"] == pytest.approx(0.001 / report["throughput_tokens_per_s"] * 1e6)
    all_tokens_per_s = (report["prompt_tokens"] + report["generated_tokens"]) / report["wall_s"]
    assert report["cost_per_million_tokens"] == pytest.approx(0.001 / all_tokens_per_s * 1e6)
    assert report["compile_s"] is None and report["compile"] is None  # ref is never compiled
    assert report["software_stack"]["canrun"].startswith("0.1.0")


def test_cpu_backend_runs_the_same_workload(run_canrun):
    report = bench_json(run_canrun, "--backend", "cpu", "--prompt-tokens", "8", "--output-tokens", "4",
                        "--requests", "2")
    assert report["backend"] == "cpu" and report["failures"] == 0 and report["generated_tokens"] == 8
    compile = report["compile"]
    assert compile["cold_s"] > 0 and compile["warm_s"] > 0 and report["compile_s"] == compile["warm_s"]
    assert compile["buckets"] == [16] and compile["recompilations"] == 0
    assert compile["plan_bytes"] > 0 and compile["peak_activation_bytes"] > 0
    assert bench_json(run_canrun, "--prompt-tokens", "8", "--requests", "1")["backend"] == "cpu"  # the default
    narrow = bench_json(run_canrun, "--prompt-tokens", "8", "--output-tokens", "4", "--requests", "1",
                        "--kv-dtype", "bf16")
    assert narrow["workload"]["kv_dtype"] == "bf16" and narrow["failures"] == 0


def test_every_prompt_bucket_of_the_workload_is_compiled_before_measuring(run_canrun):
    report = bench_json(run_canrun, "--backend", "cpu", "--prompt-tokens", "3-40", "--output-tokens", "2",
                        "--requests", "3", "--buckets", "4,8,64")
    assert report["compile"]["buckets"] == [4, 8, 64] and report["failures"] == 0
    uncompiled = bench_json(run_canrun, "--backend", "cpu", "--no-compile", "--prompt-tokens", "8", "--requests", "1")
    assert uncompiled["compile"] is None and uncompiled["failures"] == 0


def test_the_seed_fixes_the_prompts(run_canrun):
    runs = [bench_json(run_canrun, "--prompt-tokens", "4-60", "--output-tokens", "1", "--requests", "4",
                       "--seed", "5") for _ in range(2)]
    assert runs[0]["prompt_tokens"] == runs[1]["prompt_tokens"]
    assert runs[0]["price_per_hour"] is None and runs[0]["cost_per_million_tokens"] is None


def test_images_in_front_of_every_prompt_and_the_vision_tower_timed_apart(run_canrun):
    report = bench_json(run_canrun, "--image", IMAGE, "--prompt-tokens", "6", "--output-tokens", "3",
                        "--requests", "2", "--concurrency", "2", "--prefill-chunk", "5", model=VISION_MODEL)
    assert report["failures"] == 0 and report["errors"] == []
    assert report["workload"]["images"] == [str(IMAGE)]
    image_tokens = report["workload"]["image_tokens"]
    preprocess = run_canrun("preprocess", VISION_MODEL, "--image", IMAGE, "--json")
    assert preprocess.returncode == 0, preprocess.stderr
    [image] = json.loads(preprocess.stdout)["images"]
    t, h, w = image["grid_thw"]
    assert image_tokens == t * h * w // 4 + 1  # the fixture's merge_size is 2; one token ends the image
    assert report["prompt_tokens"] == 2 * (image_tokens + 6) and report["generated_tokens"] == 2 * 3
    vision, first = report["vision_s"], report["first_token_s"]
    assert vision["count"] == 2 and 0 < vision["p50"] <= vision["max"]
    assert first["mean"] > vision["mean"]  # a request's first token waits for its images
    table = run_canrun("bench", VISION_MODEL, "--image", IMAGE, "--prompt-tokens", "6", "--output-tokens", "2",
                       "--requests", "1")
    assert table.returncode == 0, table.stderr
    assert f"workload: prompt 1 image ({image_tokens} tokens) then 6 tokens" in table.stdout
    assert any(line.startswith("vision encoder ") for line in table.stdout.splitlines())


def test_two_images_in_front_of_every_prompt(run_canrun):
    images = [IMAGES / "palette_45x45.png", IMAGES / "lossy_41x27.webp"]
    report = bench_json(run_canrun, "--image", images[0], "--image", images[1], "--prompt-tokens", "4",
                        "--output-tokens", "2", "--requests", "1", "--backend", "ref", model=VISION_MODEL)
    assert report["failures"] == 0 and report["errors"] == []
    preprocess = run_canrun("preprocess", VISION_MODEL, "--image", images[0], "--image", images[1], "--json")
    grids = [image["grid_thw"] for image in json.loads(preprocess.stdout)["images"]]
    assert report["workload"]["image_tokens"] == sum(t * h * w // 4 + 1 for t, h, w in grids)


def test_table_names_the_conditions_and_each_measure(run_canrun):
    result = run_canrun("bench", MODEL, "--prompt-tokens", "8", "--output-tokens", "3", "--requests", "2",
                        "--price-per-hour", "2")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "llama, F32 weights computed in F32" in out
    assert "workload: prompt 8 tokens, output 3 tokens, 2 requests after 1 warm-up, concurrency 1" in out
    assert ", KV cache f32\n" in out
    for measure in ("load", "time to first token", "prefill", "decode", "per-token latency", "throughput",
                    "peak memory", "failures", "cost"):
        assert any(line.startswith(measure + " ") for line in out.splitlines()), measure
    assert "0 of 2" in out and "per million generated tokens at $2.00/hour" in out
    # Off a terminal, its steps as plain lines on stderr: the cold compile and the requests.
    steps = result.stderr.splitlines()
    assert "bench: loading and compiling into an empty plan cache" in steps[0], result.stderr
    assert any(line.startswith("bench: compiling: packing weights 0/") for line in steps), result.stderr
    assert any(line.startswith("bench: requests, the warm-up ones first 0/3") for line in steps), result.stderr


def test_json_prints_no_progress(run_canrun):
    result = run_canrun("bench", MODEL, "--json", "--prompt-tokens", "8", "--output-tokens", "3", "--requests", "2")
    assert result.returncode == 0 and "bench:" not in result.stderr, result.stderr


@pytest.mark.parametrize("args, words", [
    (["--prompt-tokens", "16-8"], "--prompt-tokens '16-8': the range ends below its start"),
    (["--output-tokens", "many"], "--output-tokens 'many': not a whole number"),
    (["--output-tokens", "0"], "--output-tokens '0': must be at least 1"),
    (["--prompt-tokens", "100", "--output-tokens", "29"], "reaches 129 positions, more than the model's "
                                                          "max_position_embeddings of 128"),
    (["--concurrency", "0"], "--concurrency"),
    (["--prefill-chunk", "-1"], "--prefill-chunk"),
    (["--price-per-hour", "-1"], "--price-per-hour"),
    (["--backend", "gpu"], "--backend"),
    (["--kv-dtype", "int8"], "--kv-dtype"),
    (["--backend", "cpu", "--buckets", "8,4"], "--buckets '8,4': lengths must be in ascending order"),
    (["--backend", "cpu", "--prompt-tokens", "20", "--buckets", "8,16"], "longer than the largest prompt bucket, 16"),
    (["--backend", "ref", "--buckets", "8"], "--buckets has no effect with the ref backend"),
    (["--image", IMAGE], f"--image: {MODEL} is a text model (llama); it takes no images"),
    (["--max-image-pixels", "100"], "--max-image-pixels applies to the images of --image"),
    (["--image", IMAGE, "--endpoint", "http://127.0.0.1:9"], "--image sets how canrun runs a model"),
])
def test_bad_input_is_a_usage_error(run_canrun, args, words):
    result = run_canrun("bench", MODEL, *args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr


def test_images_and_text_longer_than_the_model_are_a_usage_error(run_canrun):
    result = run_canrun("bench", VISION_MODEL, "--image", IMAGE, "--prompt-tokens", "100000")
    assert result.returncode == 2
    assert "with the images' " in result.stderr and "more than the model's max_position_embeddings" in result.stderr


def test_missing_model_folder(run_canrun, tmp_path):
    result = run_canrun("bench", tmp_path / "nowhere")
    assert result.returncode == 2 and "nowhere" in result.stderr
    empty = run_canrun("bench", tmp_path)
    assert empty.returncode != 0 and "config.json" in empty.stderr


def test_prompt_file_and_prompt_lookup(run_canrun, tmp_path):
    text = tmp_path / "prompt.txt"
    text.write_text("one two three one two three one two three")
    out = bench_json(run_canrun, "--prompt-file", text, "--output-tokens", "12", "--requests", "2",
                     "--prompt-lookup", "3")
    # Every prompt is the file's tokens; the repeated words give the first step a draft.
    assert out["workload"]["prompt_file"] == str(text)
    prompt_length = int(out["workload"]["prompt_tokens"])
    assert out["prompt_tokens"] == 2 * prompt_length
    lookup = out["prompt_lookup"]
    assert lookup["draft_tokens"] == 3 and lookup["max_ngram"] == 3
    assert lookup["drafted_tokens"] >= 2 and 0 <= lookup["accepted_tokens"] <= lookup["drafted_tokens"]
    assert out["generated_tokens"] == 24 and out["failures"] == 0
    assert bench_json(run_canrun, "--requests", "1", "--prompt-tokens", "8", "--output-tokens", "2")["prompt_lookup"] is None


@pytest.mark.parametrize("args, words", [
    (["--prompt-tokens", "8"], "--prompt-tokens: with --prompt-file the prompt is the file's tokens"),
    (["--prompt-lookup", "-1"], "--prompt-lookup"),
    (["--prompt-lookup", "2", "--prompt-lookup-ngram", "0"], "--prompt-lookup-ngram"),
])
def test_prompt_file_and_lookup_bad_input(run_canrun, tmp_path, args, words):
    text = tmp_path / "prompt.txt"
    text.write_text("a b a b")
    result = run_canrun("bench", MODEL, "--prompt-file", text, *args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr


def test_prompt_lookup_on_a_recurrent_model_names_the_state(run_canrun):
    result = run_canrun("bench", REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3_next", "--prompt-tokens", "8",
                        "--output-tokens", "4", "--requests", "1", "--prompt-lookup", "2")
    assert result.returncode != 0
    assert "--prompt-lookup: qwen3_next's layers.0.conv_state folds every token into its state" in result.stderr
