"""`canrun serve ENCODER_DIR`: all-MiniLM-L6-v2 behind OpenAI's /v1/embeddings (driven by the
official `openai` client, float and base64, `dimensions`) and text-embeddings-inference's /embed,
/similarity and /tokenize; the same vectors as sentence-transformers' committed goldens, also when
requests arrive together and are batched; the routes of the other kind of model answered 400."""
import base64
import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conftest import REPO_ROOT
from test_model_server import TINY, Server

MINILM = REPO_ROOT / "models" / "all-MiniLM-L6-v2"
SENTENCES = (REPO_ROOT / "tests" / "fixtures" / "embedding_sentences.txt").read_text().splitlines()
GOLDEN = np.load(REPO_ROOT / "tests" / "goldens" / "encoders" / "all-MiniLM-L6-v2.npy")


@pytest.fixture(scope="module")
def minilm(canrun_bin):
    if not (MINILM / ".canrun-complete").is_file():
        pytest.fail(f"{MINILM} is missing or incomplete; run tools/fetch_minilm.sh")
    server = Server(canrun_bin, MINILM, "--served-model-name", "minilm", "--max-queue", "32")
    yield server
    server.stop()


def cosine(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_openai_embeddings_match_sentence_transformers(minilm):
    response = minilm.client.embeddings.create(model="minilm", input=SENTENCES[:20])
    assert [item.index for item in response.data] == list(range(20))
    for item in response.data:
        assert cosine(item.embedding, GOLDEN[item.index]) >= 0.99999
    assert response.usage.prompt_tokens == response.usage.total_tokens > 20
    assert response.model == "minilm"


def test_base64_and_dimensions(minilm):
    status, body, _ = minilm.post("/v1/embeddings", json.dumps(
        {"input": SENTENCES[0], "encoding_format": "base64"}).encode())
    assert status == 200
    vector = np.frombuffer(base64.b64decode(body["data"][0]["embedding"]), dtype="<f4")
    assert vector.shape == (384,) and cosine(vector, GOLDEN[0]) >= 0.99999
    status, body, _ = minilm.post("/v1/embeddings", json.dumps({"input": [SENTENCES[0]], "dimensions": 64}).encode())
    assert status == 200
    short = np.array(body["data"][0]["embedding"])
    assert short.shape == (64,)
    assert abs(np.linalg.norm(short) - 1) < 1e-5  # shortened, then normalised again like the model's output
    assert cosine(short, GOLDEN[0][:64]) >= 0.99999


def test_tei_routes(minilm, run_canrun):
    status, body, _ = minilm.post("/embed", json.dumps({"inputs": SENTENCES[:3]}).encode())
    assert status == 200 and len(body) == 3
    assert all(cosine(row, GOLDEN[i]) >= 0.99999 for i, row in enumerate(body))
    status, raw, _ = minilm.post("/embed", json.dumps({"inputs": SENTENCES[0], "normalize": False}).encode())
    assert status == 200 and abs(np.linalg.norm(raw[0]) - 1) > 1e-3  # mean pooling alone, not unit length
    status, scores, _ = minilm.post("/similarity", json.dumps(
        {"inputs": {"source_sentence": SENTENCES[0], "sentences": [SENTENCES[0], SENTENCES[1], SENTENCES[4]]}}).encode())
    assert status == 200 and len(scores) == 3
    assert abs(scores[0] - 1) < 1e-5
    assert abs(scores[1] - cosine(GOLDEN[0], GOLDEN[1])) < 1e-4
    status, tokens, _ = minilm.post("/tokenize", json.dumps({"inputs": "A man is eating food."}).encode())
    expected = json.loads(run_canrun("tokenize", MINILM, "--text", "A man is eating food.", "--json").stdout)
    assert status == 200 and [t["id"] for t in tokens[0]] == expected["ids"]
    assert tokens[0][0]["special"] and not tokens[0][1]["special"]


def test_requests_together_are_batched_and_answer_as_each_alone(minilm):
    def ask(i):
        return minilm.client.embeddings.create(model="minilm", input=SENTENCES[i * 4:(i + 1) * 4])

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(ask, range(8)))
    for i, response in enumerate(responses):
        for item in response.data:
            assert cosine(item.embedding, GOLDEN[i * 4 + item.index]) >= 0.99999


@pytest.mark.parametrize("path, body, message", [
    ("/v1/embeddings", {"input": []}, "input: the list is empty"),
    ("/v1/embeddings", {"input": "hi", "encoding_format": "int8"}, "encoding_format"),
    ("/v1/embeddings", {"input": "hi", "dimensions": 1000}, "dimensions: 1000 is more than the model's 384"),
    ("/v1/embeddings", {"input": "hi", "temperature": 1}, "temperature: is not a field"),
    ("/v1/embeddings", {"input": [[1, 2, 99999999]]}, "outside the vocabulary"),
    ("/v1/embeddings", {"model": "other", "input": "hi"}, "does not exist"),
    ("/embed", {"inputs": "word " * 400}, "max_seq_length of 256"),
    ("/embed", {"inputs": "hi", "prompt_name": "query"}, "'query' is not a prompt"),
    ("/similarity", {"inputs": {"sentences": ["a"]}}, "inputs.source_sentence"),
    ("/rerank", {"query": "q", "texts": ["a"]}, "no classification head"),
    ("/v1/completions", {"prompt": "hi"}, "/v1/completions generates text; minilm is an encoder"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}, "is an encoder"),
])
def test_bad_requests_are_4xx_with_a_json_error(minilm, path, body, message):
    status, reply, _ = minilm.post(path, json.dumps(body).encode())
    assert 400 <= status < 500, reply
    assert message in reply["error"]["message"], reply
    assert minilm.get("/health")[0] == 200


def test_a_text_model_refuses_the_embedding_routes(canrun_bin):
    server = Server(canrun_bin, TINY, "--backend", "ref", "--served-model-name", "tiny")
    try:
        for path in ("/v1/embeddings", "/embed", "/similarity"):
            status, reply, _ = server.post(path, json.dumps({"input": "hi", "inputs": "hi"}).encode())
            assert status == 400 and f"{path} needs an encoder" in reply["error"]["message"], reply
    finally:
        server.stop()


def test_a_cross_encoder_answers_rerank(canrun_bin):
    golden = json.loads((REPO_ROOT / "tests" / "goldens" / "encoders" / "xlm_roberta_cross_encoder.json").read_text())
    server = Server(canrun_bin, REPO_ROOT / "tests" / "fixtures" / "encoders" / "xlm_roberta_cross_encoder",
                    "--served-model-name", "ranker")
    try:
        status, ranking, _ = server.post("/rerank", json.dumps(
            {"query": golden["query"], "texts": golden["documents"], "return_text": True}).encode())
        assert status == 200, ranking
        assert [r["index"] for r in ranking] == sorted(range(4), key=lambda i: -golden["scores"][i][0])
        for r in ranking:
            assert abs(r["score"] - golden["scores"][r["index"]][0]) < 2e-4
            assert r["text"] == golden["documents"][r["index"]]
        status, raw, _ = server.post("/rerank", json.dumps(
            {"query": golden["query"], "texts": golden["documents"][:1], "raw_scores": True}).encode())
        assert status == 200 and abs(1 / (1 + np.exp(-raw[0]["score"])) - golden["scores"][0][0]) < 2e-4
        status, reply, _ = server.post("/v1/embeddings", json.dumps({"input": "hi"}).encode())
        assert status == 400 and "is a cross-encoder" in reply["error"]["message"]
        status, reply, _ = server.post("/rerank", json.dumps({"query": "q", "texts": []}).encode())
        assert status == 400 and "texts" in reply["error"]["message"]
    finally:
        server.stop()


def test_bench_endpoint_measures_the_servers_embeddings(minilm, run_canrun, canrun_bin, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(SENTENCES[:16]) + "\n")
    result = run_canrun("bench", "--endpoint", minilm.url.removesuffix("/v1"), "--texts", texts, "--batch", 8,
                        "--requests", 3, "--warmup", 1, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["model"] == "minilm" and out["task"] == "feature-extraction"
    assert out["sentences"] == 24 and out["failures"] == 0
    assert out["tokens"] > 24  # the server's usage count, special tokens included
    assert out["sentences_per_s"] > 0 and out["batch_latency_s"]["p95"] >= out["batch_latency_s"]["p50"] > 0
    generation_flag = run_canrun("bench", "--endpoint", minilm.url, "--texts", texts, "--output-tokens", 8)
    assert generation_flag.returncode != 0 and "--output-tokens applies to a server's text generation" in \
        generation_flag.stderr
    # A generating server's /v1/embeddings refuses every request: an error, not a table of zeros.
    server = Server(canrun_bin, TINY)
    try:
        refused = run_canrun("bench", "--endpoint", server.url, "--texts", texts, "--requests", 1, "--warmup", 0)
        assert refused.returncode != 0 and "every /v1/embeddings request failed" in refused.stderr
    finally:
        server.stop()
