"""`canrun bench --endpoint`: a server's serving numbers, measured through its streamed responses,
against a stand-in OpenAI-compatible server (fake_openai_server.py)."""
import json
import re

import pytest

from conftest import REPO_ROOT
from fake_openai_server import MODEL, FakeOpenAIServer

TOKENIZER_MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"


def bench(run_canrun, url, *args):
    return run_canrun("bench", "--endpoint", url, *args)


def bench_json(run_canrun, url, *args):
    result = bench(run_canrun, url, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_token_id_prompts_are_streamed_and_timed(run_canrun):
    with FakeOpenAIServer(token_delay_s=0.005) as server:
        report = bench_json(run_canrun, server.url, "--vocab-size", "100", "--prompt-tokens", "8-16",
                            "--output-tokens", "5", "--requests", "6", "--warmup", "1", "--concurrency", "2",
                            "--price-per-hour", "3.6")
    assert len(server.requests) == 7  # the warm-up first
    for body in server.requests:
        assert body["model"] == MODEL and body["stream"] is True and body["ignore_eos"] is True
        assert body["max_tokens"] == 5 and body["stream_options"] == {"include_usage": True}
        assert 8 <= len(body["prompt"]) <= 16 and all(0 <= i < 100 for i in body["prompt"])
    measured = server.requests[1:]
    assert report["endpoint"] == server.url + "/v1/completions" and report["model"] == MODEL
    assert report["api"] == "completions" and report["prompts"] == "token ids"
    assert report["workload"]["concurrency"] == 2 and report["workload"]["request_rate"] is None
    assert report["completed"] == 6 and report["failures"] == 0 and report["errors"] == []
    assert report["generated_tokens"] == 30  # the usage chunks' completion_tokens
    assert report["prompt_tokens"] == sum(len(body["prompt"]) for body in measured)
    ttft, tpot, itl, e2el = (report[k] for k in ("first_token_s", "tpot_s", "token_latency_s", "e2el_s"))
    assert ttft["count"] == 6 and tpot["count"] == 6 and e2el["count"] == 6
    assert itl["count"] == 6 * 4  # four gaps between five streamed tokens
    assert ttft["p50"] >= 0.005 and tpot["p50"] >= 0.004 and itl["p50"] >= 0.004  # the server's delay
    for summary in (ttft, tpot, itl, e2el):
        assert summary["p50"] <= summary["p90"] <= summary["p95"] <= summary["p99"] <= summary["max"]
    assert e2el["mean"] > ttft["mean"]
    wall = report["wall_s"]
    assert report["throughput_tokens_per_s"] == pytest.approx(30 / wall)
    assert report["request_throughput"] == pytest.approx(6 / wall)
    assert report["total_token_throughput"] == pytest.approx((30 + report["prompt_tokens"]) / wall)
    assert report["short_outputs"] == 0
    assert report["slo"] is None and report["good_requests"] == 6  # no objective: every completed one
    assert report["cost_per_million_generated_tokens"] == pytest.approx(0.001 / report["throughput_tokens_per_s"] * 1e6)


def test_text_prompts_come_from_the_tokenizer_and_chat_sends_messages(run_canrun):
    with FakeOpenAIServer(usage=False) as server:
        report = bench_json(run_canrun, server.url + "/v1/", TOKENIZER_MODEL, "--api", "chat", "--prompt-tokens", "6",
                            "--output-tokens", "3", "--requests", "2", "--warmup", "0")
    assert report["endpoint"].endswith("/v1/chat/completions") and report["api"] == "chat"
    assert report["prompts"] == "text"
    for body in server.requests:
        assert body["messages"][0]["role"] == "user" and isinstance(body["messages"][0]["content"], str)
    # Without usage the streamed chunks are counted; the prompt is the token count drawn.
    assert report["generated_tokens"] == 6 and report["prompt_tokens"] == 12
    with FakeOpenAIServer() as server:
        report = bench_json(run_canrun, server.url + "/v1/completions", TOKENIZER_MODEL, "--prompt-tokens", "6",
                            "--output-tokens", "2", "--requests", "1", "--warmup", "0")
    assert isinstance(server.requests[0]["prompt"], str) and report["api"] == "completions"


def test_answers_shorter_than_asked_for_are_counted(run_canrun):
    with FakeOpenAIServer(short_by=2) as server:
        report = bench_json(run_canrun, server.url, "--vocab-size", "50", "--prompt-tokens", "4", "--output-tokens",
                            "5", "--requests", "3", "--warmup", "0")
    assert report["completed"] == 3 and report["generated_tokens"] == 9 and report["short_outputs"] == 3


def test_failed_requests_are_counted_and_reported_with_the_servers_words(run_canrun):
    with FakeOpenAIServer(fail_every=3) as server:
        result = bench(run_canrun, server.url, "--json", "--vocab-size", "50", "--prompt-tokens", "4",
                       "--output-tokens", "2", "--requests", "6", "--warmup", "0")
    assert result.returncode != 0
    report = json.loads(result.stdout)  # the numbers are still printed
    assert report["completed"] == 4 and report["failures"] == 2
    assert report["errors"] == ["HTTP 500: overloaded"]
    assert "2 of 6 requests failed: HTTP 500: overloaded" in result.stderr
    with FakeOpenAIServer(close_early=True) as server:
        result = bench(run_canrun, server.url, "--json", "--vocab-size", "50", "--prompt-tokens", "4",
                       "--output-tokens", "2", "--requests", "1", "--warmup", "0")
    assert json.loads(result.stdout)["errors"] == ["the stream ended without its closing [DONE]"]
    with FakeOpenAIServer() as server:
        result = bench(run_canrun, server.url, "--vocab-size", "50", "--served-model", "other", "--requests", "1",
                       "--prompt-tokens", "4", "--output-tokens", "2", "--warmup", "0")
    assert result.returncode != 0 and "HTTP 404: The model `other` does not exist." in result.stderr


def test_goodput_counts_the_requests_within_every_objective(run_canrun):
    args = ("--vocab-size", "50", "--prompt-tokens", "4", "--output-tokens", "4", "--requests", "3", "--warmup", "0")
    with FakeOpenAIServer(token_delay_s=0.005) as server:
        strict = bench_json(run_canrun, server.url, *args, "--slo", "ttft=10s,tpot=1ms")
        loose = bench_json(run_canrun, server.url, *args, "--slo", "ttft=10s,e2el=60s")
    assert strict["slo"] == "ttft<=10000ms, tpot<=1ms" and strict["good_requests"] == 0
    assert strict["goodput_requests_per_s"] == 0
    assert loose["good_requests"] == 3
    assert loose["goodput_requests_per_s"] == pytest.approx(3 / loose["wall_s"])


def test_a_request_rate_sends_at_gamma_gaps_without_a_concurrency_limit(run_canrun):
    with FakeOpenAIServer() as server:
        report = bench_json(run_canrun, server.url, "--vocab-size", "50", "--prompt-tokens", "4", "--output-tokens",
                            "2", "--requests", "8", "--request-rate", "500", "--burstiness", "0.5")
    assert report["workload"]["request_rate"] == 500 and report["workload"]["burstiness"] == 0.5
    assert report["workload"]["concurrency"] is None and report["completed"] == 8


def test_a_concurrency_sweep_is_tabled_and_drawn(run_canrun, tmp_path):
    plot = tmp_path / "sweep.svg"
    args = ("--vocab-size", "50", "--prompt-tokens", "4", "--output-tokens", "3", "--requests", "4", "--warmup", "0",
            "--sweep-concurrency", "1,2", "--plot", plot)
    with FakeOpenAIServer() as server:
        levels = bench_json(run_canrun, server.url, *args)
        table = bench(run_canrun, server.url, *args)
    assert [level["workload"]["concurrency"] for level in levels] == [1, 2]
    assert all(level["completed"] == 4 for level in levels)
    assert table.returncode == 0, table.stderr
    header = table.stdout.splitlines()[0].split()
    assert header[:4] == ["concurrency", "completed", "failed", "short"]
    assert re.search(r"^1 +4 +0 +0 ", table.stdout, re.M) and re.search(r"^2 +4 +0 +0 ", table.stdout, re.M)
    svg = plot.read_text()
    assert svg.startswith("<svg") and svg.count("<circle") == 4  # two panels, a point per concurrency
    assert "median TTFT (ms)" in svg and "median TPOT (ms)" in svg


def test_the_table_names_every_measure(run_canrun):
    with FakeOpenAIServer() as server:
        result = bench(run_canrun, server.url, "--vocab-size", "50", "--prompt-tokens", "4", "--output-tokens", "3",
                       "--requests", "2", "--slo", "ttft=5s", "--price-per-hour", "2")
    assert result.returncode == 0, result.stderr
    for measure in ("requests", "request throughput", "output token throughput", "total token throughput",
                    "time to first token", "time per output token", "inter-token latency", "end-to-end latency",
                    "goodput", "cost"):
        assert measure in result.stdout
    assert "2 completed, 0 failed" in result.stdout and "mean / p50 / p90 / p95 / p99" in result.stdout


@pytest.mark.parametrize("args, message", [
    (("--endpoint", "ftp://host", "--vocab-size", "5"), "--endpoint 'ftp://host': expected http://HOST"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5"), "cannot connect"),
    (("--endpoint", "http://127.0.0.1:9"), "give --vocab-size"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5", "--api", "chat"), "--api chat sends text"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5", "--slo", "ttft=abc"),
     "--slo 'ttft=abc': 'abc' is not a positive duration"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5", "--slo", "itl=5ms"), "unknown objective 'itl'"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5", "--plot", "x.svg"), "give --sweep-concurrency"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5", "--backend", "ref"),
     "--backend sets how canrun runs a model; with --endpoint the server runs it"),
    (("--endpoint", "http://127.0.0.1:9", "--vocab-size", "5", "--prefill-chunk", "64"),
     "--prefill-chunk sets how canrun runs a model; with --endpoint the server runs it"),
    ((TOKENIZER_MODEL, "--slo", "ttft=1s"), "--slo applies to a server's bench: give --endpoint URL"),
    ((), "MODEL_DIR is required (or --endpoint URL)"),
])
def test_bad_input_is_named(run_canrun, args, message):
    result = run_canrun("bench", *args)
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_two_servers_benches_make_a_migration_report(run_canrun, tmp_path):
    args = ("--json", "--vocab-size", "50", "--prompt-tokens", "4", "--output-tokens", "4", "--requests", "3",
            "--price-per-hour", "2")
    paths = {}
    for name, delay in (("current", 0.02), ("candidate", 0.002)):
        with FakeOpenAIServer(token_delay_s=delay) as server:
            result = bench(run_canrun, server.url, *args)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        # A server's TPOT is per request, as `vllm bench serve` has it, not the gaps between chunks.
        report["token_latency_s"]["p95"] = 1.0
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(report))
    result = run_canrun("report", paths["current"], paths["candidate"], "--stop", "p95_tpot<15ms,throughput>0")
    assert result.returncode == 0, result.stderr
    assert "GO: every stop condition holds" in result.stdout
    assert "/v1/completions" in result.stdout  # each platform named by its endpoint
    # The server's own start-up and memory are not seen by its client: never a number.
    assert re.search(r"\| peak memory \(resident\) \(peak_memory\) \| not measured \| not measured \|", result.stdout)
    result = run_canrun("report", paths["current"], paths["candidate"], "--stop", "peak_memory<1GB")
    assert "NO-GO: peak_memory<1GB (candidate: not measured)" in result.stdout
