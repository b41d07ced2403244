"""`canrun serve MODEL_DIR`: the engine behind an OpenAI-compatible API, driven by the official
`openai` Python client (completions and chat, whole and streamed, the same text as `canrun
generate`), bad requests answered 4xx with OpenAI-style bodies while the server keeps serving, the
bounded queue, a client that leaves (streamed or not), the request timeout and SIGTERM's drain;
the connection gate in front (silent connections, an announced oversize body, the Host check),
served names (a Hub id, /v1/models/ID), content parts, and SIGTERM while the model loads."""
import json
import os
import shutil
import signal
import socket
from concurrent.futures import ThreadPoolExecutor
import subprocess
import time
import urllib.error
import urllib.request

import openai
import pytest

from conftest import REPO_ROOT

TINY = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"  # no chat template; 128 positions
SMOLLM2 = REPO_ROOT / "models" / "SmolLM2-135M-Instruct"


class Server:
    def __init__(self, canrun_bin, model, *args, env=None):
        self.process = subprocess.Popen([canrun_bin, "serve", model, "--port", "0", *map(str, args)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the server did not start: {self.process.stderr.read()}")
        self.url = line.split(" at ")[1].split()[0]  # http://127.0.0.1:PORT/v1
        self.client = openai.OpenAI(base_url=self.url, api_key="unused", max_retries=0, timeout=120)

    def get(self, path):
        with urllib.request.urlopen(self.url.removesuffix("/v1") + path, timeout=30) as response:
            return response.status, response.read().decode()

    def post(self, path, body, headers=None):
        request = urllib.request.Request(self.url.removesuffix("/v1") + path, data=body,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read()), response.headers
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), error.headers

    def address(self):
        host, port = self.url.removeprefix("http://").removesuffix("/v1").split(":")
        return host, int(port)

    def raw(self, request, timeout=10):
        """Sends `request` as it is on a connection of its own; everything until the server closes it."""
        with socket.create_connection(self.address(), timeout=timeout) as client:
            client.sendall(request)
            received = b""
            while chunk := client.recv(65536):
                received += chunk
            return received.decode(errors="replace")

    def metric(self, name):
        for line in self.get("/metrics")[1].splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise AssertionError(f"{name} is not in /metrics")

    def wait_for(self, condition, what):
        for _ in range(600):  # a condition, not a duration: it usually holds at once
            if condition():
                return
            time.sleep(0.05)
        raise AssertionError(f"never: {what}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)


@pytest.fixture(scope="module")
def tiny(canrun_bin):
    server = Server(canrun_bin, TINY, "--backend", "ref", "--served-model-name", "tiny")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def smollm2(canrun_bin):
    if not SMOLLM2.is_dir():
        pytest.fail(f"{SMOLLM2} is missing: run tools/fetch_smollm2.sh (scripts/test.sh does)")
    server = Server(canrun_bin, SMOLLM2, "--slots", "1", "--max-queue", "0", "--request-timeout", "20")
    yield server
    server.stop()


def generated_text(run_canrun, model, *args):
    result = run_canrun("generate", model, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_completions_are_what_generate_says_whole_and_streamed(tiny, run_canrun):
    expected = generated_text(run_canrun, TINY, "--backend", "ref", "--prompt", "hello world", "--max-new-tokens", 8)
    whole = tiny.client.completions.create(model="tiny", prompt="hello world", max_tokens=8, temperature=0)
    assert whole.choices[0].text == expected["text"] and whole.object == "text_completion"
    assert whole.usage.prompt_tokens == len(expected["prompt_ids"]) and whole.usage.completion_tokens == 8
    assert whole.choices[0].finish_reason == "length"
    chunks = list(tiny.client.completions.create(model="tiny", prompt="hello world", max_tokens=8, temperature=0,
                                                 stream=True, stream_options={"include_usage": True}))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == expected["text"]
    assert chunks[-2].choices[0].finish_reason == "length" and chunks[-1].usage.completion_tokens == 8
    # Token ids as the prompt, as benchmarks send them.
    ids = tiny.client.completions.create(model="tiny", prompt=expected["prompt_ids"], max_tokens=8, temperature=0)
    assert ids.choices[0].text == expected["text"]


def test_stop_strings_seeds_and_models(tiny, run_canrun):
    expected = generated_text(run_canrun, TINY, "--backend", "ref", "--prompt", "once", "--max-new-tokens", 12)["text"]
    cut = expected[3:5]
    stopped = tiny.client.completions.create(model="tiny", prompt="once", max_tokens=12, temperature=0, stop=[cut])
    assert stopped.choices[0].text == expected[:expected.index(cut)]
    assert stopped.choices[0].finish_reason == "stop"
    draws = [tiny.client.completions.create(model="tiny", prompt="once", max_tokens=12, temperature=1.0, seed=7)
             .choices[0].text for _ in range(2)]
    assert draws[0] == draws[1]
    assert [m.id for m in tiny.client.models.list()] == ["tiny"]
    assert tiny.get("/health") == (200, '{"status":"ok"}')


@pytest.mark.parametrize("body, status, message", [
    (b"{not json", 400, "the request body is not valid JSON"),
    (b'{"model": "other", "prompt": "x"}', 404, "The model `other` does not exist"),
    (b'{"prompt": "x", "max_tokens": -3}', 400, "max_tokens: must be at least 1, got -3"),
    (b'{"prompt": "x", "n": 2}', 400, "n: only 1 choice is supported"),
    (b'{"prompt": "x", "temperature": 9}', 400, "temperature: must be between 0 and 2"),
    (b'{"prompt": [1, 2, 99999]}', 400, "token id 99999 is outside the vocabulary"),
    (b'{"prompt": "' + b"word " * 200 + b'"}', 400, "leave no room in the model's context of 128 positions"),
    (b'{"prompt": "x", "max_tokens": 500}', 400, "exceeds the model's context of 128 positions"),
    (b'{"prompt": "' + b"a" * (10 << 20) + b'"}', 413, "the request body is larger than 4194304 bytes"),
    (b'{"messages": [{"role": "user", "content": "hi"}]}', 400, "this model has no chat template"),
])
def test_bad_requests_get_openai_errors_and_the_server_keeps_serving(tiny, body, status, message):
    path = "/v1/chat/completions" if b"messages" in body else "/v1/completions"
    code, error, _ = tiny.post(path, body)
    assert code == status and message in error["error"]["message"], error
    assert error["error"]["type"] == ("invalid_request_error" if status < 500 else "server_error")
    assert tiny.get("/health")[0] == 200


def test_the_openai_client_raises_its_own_errors(tiny):
    with pytest.raises(openai.NotFoundError):
        tiny.client.completions.create(model="missing", prompt="x", max_tokens=2)
    with pytest.raises(openai.BadRequestError, match="max_tokens"):
        tiny.client.completions.create(model="tiny", prompt="x", max_tokens=-1)


def test_metrics_count_requests_tokens_and_latencies(tiny):
    before = tiny.metric("canrun_generation_tokens_total")
    tiny.client.completions.create(model="tiny", prompt="metrics", max_tokens=5, temperature=0, extra_body={"ignore_eos": True})
    text = tiny.get("/metrics")[1]
    assert tiny.metric("canrun_generation_tokens_total") == before + 5
    assert 'canrun_requests_total{route="/v1/completions",status="200"}' in text
    assert "canrun_time_to_first_token_seconds_bucket{le=\"+Inf\"}" in text
    assert "canrun_inter_token_latency_seconds_count" in text
    assert tiny.metric("canrun_queue_length") == 0 and tiny.metric("canrun_running_sequences") == 0


def test_chat_on_the_real_model_is_what_generate_says(smollm2, run_canrun):
    expected = generated_text(run_canrun, SMOLLM2, "--chat", "--user", "What is the capital of France?",
                              "--max-new-tokens", 12)
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    whole = smollm2.client.chat.completions.create(model="SmolLM2-135M-Instruct", messages=messages, max_tokens=12,
                                                   temperature=0)
    assert whole.choices[0].message.content == expected["text"] and whole.choices[0].message.role == "assistant"
    chunks = list(smollm2.client.chat.completions.create(model="SmolLM2-135M-Instruct", messages=messages,
                                                         max_tokens=12, temperature=0, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == expected["text"]


def test_concurrent_requests_decode_together_and_answer_as_each_alone(canrun_bin, run_canrun):
    prompts = ["The capital of France is", "Once upon a time", "def fibonacci(n):"]
    expected = [generated_text(run_canrun, SMOLLM2, "--prompt", p, "--max-new-tokens", 24)["text"] for p in prompts]
    # Prompts in pieces of two tokens, between the others' decode steps.
    server = Server(canrun_bin, SMOLLM2, "--slots", "3", "--prefill-chunk", "2")
    try:
        def ask(prompt):
            return server.client.completions.create(model="SmolLM2-135M-Instruct", prompt=prompt, max_tokens=24,
                                                    temperature=0).choices[0].text
        with ThreadPoolExecutor(3) as pool:
            assert list(pool.map(ask, prompts)) == expected
        text = server.get("/metrics")[1]
        single = int(text.split('canrun_decode_batch_size_bucket{le="1"} ')[1].split()[0])
        steps = int(text.split("canrun_decode_batch_size_count ")[1].split()[0])
        assert steps > single  # some steps decoded more than one sequence
    finally:
        server.stop()


def long_stream(server, tokens=300):
    return server.client.completions.create(model="SmolLM2-135M-Instruct", prompt="Count:", max_tokens=tokens,
                                            temperature=0, stream=True, extra_body={"ignore_eos": True})


def test_a_client_that_leaves_before_a_whole_answer_frees_its_slot(smollm2):
    cancelled = smollm2.metric("canrun_requests_cancelled_total")
    host, port = smollm2.url.removeprefix("http://").removesuffix("/v1").split(":")
    body = json.dumps({"prompt": "Count:", "max_tokens": 300, "ignore_eos": True, "temperature": 0}).encode()
    with socket.create_connection((host, int(port)), timeout=30) as client:
        client.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                       b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        smollm2.wait_for(lambda: smollm2.metric("canrun_running_sequences") == 1, "the request runs")
    smollm2.wait_for(lambda: smollm2.metric("canrun_requests_cancelled_total") == cancelled + 1,
                     "the generation stops when its client leaves, though nothing was written to it")
    assert smollm2.metric("canrun_running_sequences") == 0
    ok = smollm2.client.completions.create(model="SmolLM2-135M-Instruct", prompt="x", max_tokens=2, temperature=0)
    assert ok.usage.completion_tokens >= 1


def test_a_full_queue_answers_429_and_a_client_that_leaves_frees_its_slot(smollm2):
    cancelled = smollm2.metric("canrun_requests_cancelled_total")
    stream = long_stream(smollm2)
    next(iter(stream))  # running: the only slot is taken and no request may wait
    code, error, headers = smollm2.post("/v1/completions", b'{"prompt": "x", "max_tokens": 2}')
    assert code == 429 and headers["Retry-After"] == "1" and error["error"]["type"] == "rate_limit_error"
    stream.close()
    smollm2.wait_for(lambda: smollm2.metric("canrun_requests_cancelled_total") == cancelled + 1,
                     "the generation stops when its client leaves")
    assert smollm2.metric("canrun_running_sequences") == 0
    ok = smollm2.client.completions.create(model="SmolLM2-135M-Instruct", prompt="x", max_tokens=2, temperature=0)
    assert ok.usage.completion_tokens >= 1


def test_a_request_past_its_timeout_gets_504(canrun_bin):
    server = Server(canrun_bin, SMOLLM2, "--request-timeout", "0.3")
    try:
        code, error, _ = server.post("/v1/completions", b'{"prompt": "x", "max_tokens": 400, "ignore_eos": true}')
        assert code == 504 and "--request-timeout" in error["error"]["message"]
    finally:
        server.stop()


def test_sigterm_lets_the_requests_in_flight_finish(canrun_bin):
    server = Server(canrun_bin, SMOLLM2)
    stream = long_stream(server, tokens=40)
    chunks = [next(iter(stream))]
    server.process.send_signal(signal.SIGTERM)
    chunks.extend(stream)
    assert sum(1 for c in chunks if c.choices and c.choices[0].text) >= 30  # the whole answer still arrives
    assert chunks[-1].choices[0].finish_reason == "length"
    assert server.process.wait(timeout=60) == 0


def test_models_retrieve_gives_the_served_model_and_404_for_another(tiny):
    model = tiny.client.models.retrieve("tiny")
    assert model.id == "tiny" and model.object == "model"
    with pytest.raises(openai.NotFoundError) as raised:
        tiny.client.models.retrieve("gpt-4")
    assert raised.value.body["param"] == "model" and raised.value.body["code"] == "model_not_found"


def hub_cache_with_tiny(tmp_path, repo_id="tiny-org/tiny-llama"):
    """An HF cache holding the tiny model as huggingface_hub lays out a snapshot; env to use it offline."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / ("models--" + repo_id.replace("/", "--"))
    shutil.copytree(TINY, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return dict(os.environ, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")


def test_a_hub_id_is_served_under_that_id(canrun_bin, tmp_path):
    server = Server(canrun_bin, "tiny-org/tiny-llama", "--backend", "ref", env=hub_cache_with_tiny(tmp_path))
    try:
        assert [m.id for m in server.client.models.list().data] == ["tiny-org/tiny-llama"]
        assert server.client.models.retrieve("tiny-org/tiny-llama").id == "tiny-org/tiny-llama"
        done = server.client.completions.create(model="tiny-org/tiny-llama", prompt="hello", max_tokens=2,
                                                temperature=0)
        assert done.model == "tiny-org/tiny-llama" and done.usage.completion_tokens == 2
    finally:
        server.stop()
    renamed = Server(canrun_bin, "tiny-org/tiny-llama", "--backend", "ref", "--served-model-name", "mine",
                     env=hub_cache_with_tiny(tmp_path / "again"))
    try:
        assert [m.id for m in renamed.client.models.list().data] == ["mine"]
    finally:
        renamed.stop()


def test_text_content_parts_are_one_string_joined_with_newlines(smollm2):
    def answer(content):
        # The fixture lets no request wait: the last one's slot must be free.
        smollm2.wait_for(lambda: smollm2.metric("canrun_running_sequences") == 0, "the slot is free")
        return smollm2.client.chat.completions.create(
            model="SmolLM2-135M-Instruct", messages=[{"role": "user", "content": content}], max_tokens=6,
            temperature=0).choices[0].message.content
    assert answer([{"type": "text", "text": "What is 2+2?"}]) == answer("What is 2+2?")
    assert answer([{"type": "text", "text": "Hello."}, {"type": "text", "text": "Who are you?"}]) == \
        answer("Hello.\nWho are you?")


@pytest.mark.parametrize("field", ['"temperature": 1e-300', '"top_p": 1.5', '"top_k": -5', '"max_tokens": -1',
                                   '"seed": -1', '"n": 3', '"presence_penalty": 9'])
def test_sampling_edge_values_are_400s_naming_the_field(tiny, field):
    code, error, _ = tiny.post("/v1/completions", ('{"prompt": "x", ' + field + "}").encode())
    name = field.split('"')[1]
    assert code == 400 and error["error"]["param"] == name and error["error"]["message"].startswith(name + ":")


def test_silent_connections_do_not_delay_health_and_an_oversize_body_gets_413_at_once(canrun_bin):
    server = Server(canrun_bin, TINY, "--backend", "ref", "--header-timeout", "30")
    silent = []
    try:
        for _ in range(150):
            silent.append(socket.create_connection(server.address(), timeout=10))
        start = time.monotonic()
        assert server.get("/health") == (200, '{"status":"ok"}')
        assert time.monotonic() - start < 2
        start = time.monotonic()
        reply = server.raw(b"POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 1000000000000\r\n\r\n{")
        assert time.monotonic() - start < 3
        assert reply.startswith("HTTP/1.1 413 ") and '"invalid_request_error"' in reply
    finally:
        for connection in silent:
            connection.close()
        server.stop()


def test_a_host_that_is_not_loopback_gets_421_unless_allowed(canrun_bin):
    request = b"GET /v1/models HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
    server = Server(canrun_bin, TINY, "--backend", "ref", "--allow-host", "models.example")
    try:
        refused = server.raw(request % b"attacker.example")
        assert refused.startswith("HTTP/1.1 421 ") and "--allow-host" in refused
        body = json.loads(refused.split("\r\n\r\n", 1)[1])
        assert body["error"]["type"] == "invalid_request_error"
        assert server.raw(request % b"").startswith("HTTP/1.1 400 ")
        assert server.raw(request % b"localhost:8000").startswith("HTTP/1.1 200 ")
        assert server.raw(request % b"models.example").startswith("HTTP/1.1 200 ")
    finally:
        server.stop()


def test_sigterm_while_the_model_loads_ends_the_process(canrun_bin):
    process = subprocess.Popen([canrun_bin, "serve", SMOLLM2, "--port", "0", "--no-plan-cache"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr.readline().startswith("loading ")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert "serving" not in process.stdout.read()
        assert process.returncode != 0
    finally:
        if process.poll() is None:
            process.kill()


def test_prompt_lookup_serves_what_generate_says(canrun_bin, run_canrun):
    prompt = "one two three four one two three four one two"
    expected = generated_text(run_canrun, TINY, "--prompt", prompt, "--max-new-tokens", 16)["text"]
    server = Server(canrun_bin, TINY, "--prompt-lookup", "4", "--served-model-name", "tiny")
    try:
        # Stop strings are looked for after every token, drafted or not.
        whole = server.client.completions.create(model="tiny", prompt=prompt, max_tokens=16, temperature=0)
        assert whole.choices[0].text == expected
        cut = expected[4:6]
        stopped = server.client.completions.create(model="tiny", prompt=prompt, max_tokens=16, temperature=0,
                                                   stop=[cut])
        assert stopped.choices[0].text == expected[:expected.index(cut)]
    finally:
        server.stop()


def test_prompt_lookup_on_a_recurrent_model_is_refused_at_start(run_canrun):
    result = run_canrun("serve", REPO_ROOT / "tests" / "fixtures" / "models" / "lfm2", "--port", "0",
                        "--prompt-lookup", "2")
    assert result.returncode == 2
    assert "--prompt-lookup: lfm2's " in result.stderr and "folds every token into its state" in result.stderr
