"""canrun embed and rerank: all-MiniLM-L6-v2 as published (tools/fetch_minilm.sh) against
sentence-transformers' embeddings of 200 committed sentences (tools/make_minilm_goldens.py), a
tiny cross-encoder against its CrossEncoder scores, and the errors a user meets."""
import json

import numpy as np
import pytest

from conftest import REPO_ROOT

MODEL_DIR = REPO_ROOT / "models" / "all-MiniLM-L6-v2"
SENTENCES = REPO_ROOT / "tests" / "fixtures" / "embedding_sentences.txt"
GOLDEN = REPO_ROOT / "tests" / "goldens" / "encoders" / "all-MiniLM-L6-v2.npy"
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"
ENCODERS = REPO_ROOT / "tests" / "fixtures" / "encoders"


@pytest.fixture(scope="module")
def minilm():
    if not (MODEL_DIR / ".canrun-complete").is_file():
        pytest.fail(f"{MODEL_DIR} is missing or incomplete; run tools/fetch_minilm.sh")
    return MODEL_DIR


def cosines(got, expected):
    return (got * expected).sum(axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))


@pytest.mark.parametrize("backend", ["cpu", "ref"])
def test_minilm_matches_sentence_transformers_on_200_sentences(run_canrun, minilm, tmp_path, backend):
    out = tmp_path / "embeddings.npy"
    result = run_canrun("embed", minilm, "--file", SENTENCES, "--format", "npy", "--output", out,
                        "--backend", backend)
    assert result.returncode == 0, result.stderr
    got = np.load(out)
    expected = np.load(GOLDEN)
    assert got.shape == expected.shape == (200, 384)
    assert cosines(got, expected).min() >= 0.99999
    # The folder's Normalize module: unit vectors.
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_bf16_products_keep_minilm_within_the_labs_bf16_bound(run_canrun, minilm, tmp_path):
    out = tmp_path / "embeddings.npy"
    result = run_canrun("embed", minilm, "--file", SENTENCES, "--format", "npy", "--output", out,
                        "--products", "bf16", "--no-plan-cache")
    assert result.returncode == 0, result.stderr
    got = np.load(out)
    worst = cosines(got, np.load(GOLDEN)).min()
    assert 0.999 <= worst < 0.9999999  # moved by bf16's rounding, not by more
    bad = run_canrun("embed", minilm, "--text", "hi", "--products", "int8")
    assert bad.returncode != 0 and "--products 'int8': must be f32 or bf16" in bad.stderr
    on_ref = run_canrun("embed", minilm, "--text", "hi", "--products", "bf16", "--backend", "ref")
    assert on_ref.returncode != 0 and "--products bf16 has no effect with the ref backend" in on_ref.stderr


def test_sharded_minilm_writes_what_one_process_writes(run_canrun, minilm, tmp_path):
    lines = tmp_path / "first40.txt"
    lines.write_text("".join(SENTENCES.read_text().splitlines(keepends=True)[:40]))
    outputs = {}
    for cores in (1, 2):
        outputs[cores] = tmp_path / f"cores{cores}.npy"
        result = run_canrun("embed", minilm, "--file", lines, "--format", "npy", "--output", outputs[cores],
                            "--cores", cores, "--backend", "ref")
        assert result.returncode == 0, result.stderr
    alone, sharded = np.load(outputs[1]), np.load(outputs[2])
    # The partial sums of the two workers add in another order: rounding apart, no more.
    assert np.abs(sharded - alone).max() < 1e-5
    assert cosines(sharded, np.load(GOLDEN)[:40]).min() >= 0.99999


def test_json_output_names_the_dimension_and_each_inputs_tokens(run_canrun, minilm):
    long_text = "word " * 400
    result = run_canrun("embed", minilm, "--text", "A man is eating food.", "--text", long_text)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["dimension"] == 384
    assert out["tokens"] == [8, 256]  # [CLS] a man is eating food . [SEP]; the long one cut at max_seq_length
    assert len(out["embeddings"]) == 2 and len(out["embeddings"][0]) == 384
    expected = np.load(GOLDEN)[0]  # the first committed sentence is the same text
    assert cosines(np.array([out["embeddings"][0]]), np.array([expected]))[0] >= 0.99999


def test_errors_are_one_line_and_name_the_option(run_canrun, minilm, tmp_path):
    too_long = run_canrun("embed", minilm, "--text", "word " * 400, "--no-truncate")
    assert too_long.returncode != 0
    assert "max_seq_length of 256" in too_long.stderr and "truncation is off" in too_long.stderr
    no_input = run_canrun("embed", minilm)
    assert no_input.returncode != 0 and "--text" in no_input.stderr
    empty_file = tmp_path / "empty.txt"
    empty_file.write_text("")
    empty = run_canrun("embed", minilm, "--file", empty_file)
    assert empty.returncode != 0 and "--file" in empty.stderr and "has no lines" in empty.stderr
    prompt = run_canrun("embed", minilm, "--text", "hi", "--prompt-name", "query")
    assert prompt.returncode != 0 and "--prompt-name: 'query'" in prompt.stderr
    generator = run_canrun("embed", FIXTURES / "llama_f32", "--text", "hi")
    assert generator.returncode != 0 and "generates text" in generator.stderr
    npy_without_output = run_canrun("embed", minilm, "--text", "hi", "--format", "npy")
    assert npy_without_output.returncode != 0 and "--output" in npy_without_output.stderr
    for result in (too_long, no_input, empty, prompt, generator, npy_without_output):
        assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_generate_on_an_encoder_is_refused(run_canrun):
    result = run_canrun("generate", ENCODERS / "bert_mean", "--prompt", "hello")
    assert result.returncode != 0
    assert "is an encoder" in result.stderr and "canrun embed" in result.stderr


def test_rerank_orders_documents_as_sentence_transformers_scores_them(run_canrun):
    golden = json.loads((REPO_ROOT / "tests" / "goldens" / "encoders" / "bert_cross_encoder.json").read_text())
    docs = [arg for document in golden["documents"] for arg in ("--doc", document)]
    result = run_canrun("rerank", ENCODERS / "bert_cross_encoder", "--query", golden["query"], *docs, "--json")
    assert result.returncode == 0, result.stderr
    ranking = json.loads(result.stdout)["ranking"]
    expected = sorted(range(len(golden["documents"])), key=lambda i: -golden["scores"][i][0])
    assert [entry["index"] for entry in ranking] == expected
    for entry in ranking:
        assert abs(entry["score"] - golden["scores"][entry["index"]][0]) < 2e-4
    table = run_canrun("rerank", ENCODERS / "bert_cross_encoder", "--query", golden["query"], *docs)
    assert table.returncode == 0 and table.stdout.splitlines()[0].split() == ["rank", "score", "index", "document"]


@pytest.mark.parametrize("name", ["bert_cross_encoder", "gte_cross_encoder"])
def test_sharded_rerank_prints_what_one_process_prints(run_canrun, name):
    golden = json.loads((REPO_ROOT / "tests" / "goldens" / "encoders" / f"{name}.json").read_text())
    docs = [arg for document in golden["documents"] for arg in ("--doc", document)]
    rankings = {}
    for cores in (1, 2):
        result = run_canrun("rerank", ENCODERS / name, "--query", golden["query"], *docs, "--json",
                            "--cores", cores, "--backend", "ref")
        assert result.returncode == 0, result.stderr
        assert len(result.stdout.splitlines()) == 1, "only rank 0 prints"
        rankings[cores] = json.loads(result.stdout)["ranking"]
    assert [entry["index"] for entry in rankings[2]] == [entry["index"] for entry in rankings[1]]
    for sharded, alone in zip(rankings[2], rankings[1]):
        assert abs(sharded["score"] - alone["score"]) < 1e-5


def test_rerank_on_a_model_without_a_classification_head_is_refused(run_canrun, minilm):
    result = run_canrun("rerank", minilm, "--query", "q", "--doc", "d")
    assert result.returncode != 0
    assert "config.json: field 'architectures'" in result.stderr and "not a cross-encoder" in result.stderr
