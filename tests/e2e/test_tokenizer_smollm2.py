"""`canrun tokenize` against the `tokenizers` library, live: the real SmolLM2 tokenizer and the
committed test tokenizers, on every case of tests/fixtures/tokenizer_cases.json.

Texts go through --file, so every byte (NUL, CR, trailing spaces) reaches canrun unchanged.
"""
import json

import pytest
from tokenizers import Tokenizer

from conftest import REPO_ROOT

SMOLLM2_DIR = REPO_ROOT / "models" / "SmolLM2-135M-Instruct"
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "tokenizers"
CASES = json.loads((REPO_ROOT / "tests" / "fixtures" / "tokenizer_cases.json").read_text())["cases"]
CASE_IDS = [case["name"] for case in CASES]
# A folder for some, the tokenizer.json path for others: the CLI takes both.
TEST_TOKENIZERS = {
    "gpt2": FIXTURES / "gpt2",
    "llama3": FIXTURES / "llama3" / "tokenizer.json",
    "sentencepiece": FIXTURES / "sentencepiece",
    "llama2": FIXTURES / "llama2" / "tokenizer.json",
    "bert": FIXTURES / "bert",
}


@pytest.fixture(scope="module")
def smollm2_dir():
    if not SMOLLM2_DIR.is_dir():
        pytest.skip(f"{SMOLLM2_DIR} is absent; tools/fetch_smollm2.sh makes it")
    return SMOLLM2_DIR


def cli_json(run_canrun, *args):
    result = run_canrun("tokenize", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def check_against_library(run_canrun, source, library, text, tmp_path):
    """Encode (with and without special tokens) and decode (skipping and keeping them)."""
    text_file = tmp_path / "text.txt"
    text_file.write_bytes(text.encode("utf-8"))
    for add_special in (True, False):
        expected = library.encode(text, add_special_tokens=add_special)
        flags = [] if add_special else ["--no-special"]
        got = cli_json(run_canrun, source, "--file", text_file, *flags)
        assert got == {"ids": expected.ids, "tokens": expected.tokens}, f"add_special_tokens={add_special}"
        ids = ",".join(map(str, expected.ids))
        for skip in (True, False):
            flags = [] if skip else ["--keep-special"]
            decoded = cli_json(run_canrun, source, "--decode", ids, *flags)
            assert decoded == {"text": library.decode(expected.ids, skip_special_tokens=skip)}, \
                f"decode of add_special_tokens={add_special} ids, skip_special_tokens={skip}"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_smollm2_matches_library(run_canrun, smollm2_dir, case, tmp_path):
    library = Tokenizer.from_file(str(smollm2_dir / "tokenizer.json"))
    check_against_library(run_canrun, smollm2_dir, library, case["text"], tmp_path)


def test_smollm2_corpus_matches_library(run_canrun, smollm2_dir, tmp_path):
    library = Tokenizer.from_file(str(smollm2_dir / "tokenizer.json"))
    corpus = (REPO_ROOT / "tests" / "fixtures" / "tokenizer_corpus.txt").read_text(encoding="utf-8")
    check_against_library(run_canrun, smollm2_dir, library, corpus * 3, tmp_path)


@pytest.mark.parametrize("style", list(TEST_TOKENIZERS))
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_committed_tokenizers_match_library(run_canrun, style, case, tmp_path):
    source = TEST_TOKENIZERS[style]
    json_path = source if source.suffix == ".json" else source / "tokenizer.json"
    library = Tokenizer.from_file(str(json_path))
    check_against_library(run_canrun, source, library, case["text"], tmp_path)


def test_table_lists_index_id_and_visible_piece(run_canrun):
    result = run_canrun("tokenize", FIXTURES / "gpt2", "--text", "Hi\tthere\n")
    assert result.returncode == 0, result.stderr
    library = Tokenizer.from_file(str(FIXTURES / "gpt2" / "tokenizer.json"))
    expected = library.encode("Hi\tthere\n")
    lines = result.stdout.splitlines()
    assert lines[0] == f"{len(expected.ids)} tokens"
    rows = [line.split() for line in lines[2:]]
    assert [int(row[0]) for row in rows] == list(range(len(expected.ids)))
    assert [int(row[1]) for row in rows] == expected.ids
    assert [json.loads(row[2]) for row in rows] == expected.tokens
    assert '"\\t"' in result.stdout and '"\\n"' in result.stdout  # control bytes shown escaped


def test_plain_decode_prints_the_text(run_canrun):
    library = Tokenizer.from_file(str(FIXTURES / "sentencepiece" / "tokenizer.json"))
    ids = library.encode("Once upon a time").ids
    result = run_canrun("tokenize", FIXTURES / "sentencepiece", "--decode", ",".join(map(str, ids)))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Once upon a time\n"


def test_bad_decode_item_is_named(run_canrun):
    result = run_canrun("tokenize", FIXTURES / "gpt2", "--decode", "5,seven,9")
    assert result.returncode != 0
    assert "error: --decode: item 2 'seven' is not a token id" in result.stderr


def test_decode_of_unknown_id_fails(run_canrun):
    result = run_canrun("tokenize", FIXTURES / "gpt2", "--decode", "1,100000")
    assert result.returncode != 0
    assert "token id 100000" in result.stderr


def test_folder_without_tokenizer_json_fails(run_canrun, tmp_path):
    result = run_canrun("tokenize", tmp_path, "--text", "hi")
    assert result.returncode != 0
    assert f"error: {tmp_path}: folder has no tokenizer.json" in result.stderr


def test_malformed_tokenizer_json_names_the_file(run_canrun, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"type": "Mystery", "vocab": []}}')
    result = run_canrun("tokenize", path, "--text", "hi")
    assert result.returncode != 0
    assert f"error: {path}: model.type: 'Mystery' is not supported" in result.stderr


def test_text_file_or_decode_is_required(run_canrun):
    result = run_canrun("tokenize", FIXTURES / "gpt2")
    assert result.returncode != 0
    assert "give one of --text, --file or --decode" in result.stderr
