"""Writes the tokenizer parity fixtures and goldens from the `tokenizers` library.

For every style of tools/tokenizer_styles.py, and for the pipeline variants below (the
same trained models with other normalizers, pre-tokenizers, decoders and post-processors,
so every supported component is covered), this writes

  tests/fixtures/tokenizers/<name>/tokenizer.json
  tests/goldens/tokenizers/<name>.json

The golden holds, for every case of tests/fixtures/tokenizer_cases.json, the ids and tokens
of encode with and without special tokens, and decode of each of those id lists with
skip_special_tokens true and false; plus the vocabulary size and the added tokens.
tests/unit/tokenizer_parity_test.cpp checks canrun's tokenizer against these files.

Run from anywhere:  python3 tools/make_tokenizer_goldens.py
"""
import json
from pathlib import Path

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

from tokenizer_styles import CORPUS, LLAMA3_PATTERN, STYLES, build_tokenizer

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "fixtures" / "tokenizer_cases.json"
FIXTURES_DIR = ROOT / "tests" / "fixtures" / "tokenizers"
GOLDENS_DIR = ROOT / "tests" / "goldens" / "tokenizers"


def _corpus_lines():
    return CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)


def _with_model(tok, **changes):
    """A copy of `tok` whose model fields are updated with `changes`."""
    data = json.loads(tok.to_str())
    data["model"].update(changes)
    return Tokenizer.from_str(json.dumps(data))


def _gpt2_prefix_space():
    tok = build_tokenizer("gpt2")
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    return tok


def _split_removed():
    tok = build_tokenizer("gpt2")
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\s+"), behavior="removed"),
        pre_tokenizers.Split(Regex(r"\p{P}+"), behavior="merged_with_previous"),
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    return tok


def _split_next_contiguous():
    tok = build_tokenizer("gpt2")
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Strip()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(" ", behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"[a-z]+"), behavior="contiguous", invert=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    return tok


def _whitespace_punctuation():
    tok = build_tokenizer("gpt2")
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKD(),
        normalizers.Replace(Regex(r"[0-9]"), "#"),
        normalizers.Strip(left=False, right=True),
        normalizers.Prepend("^"),
    ])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.CharDelimiterSplit("-"),
        pre_tokenizers.Punctuation(behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    return tok


def _whitespace_roberta():
    tok = build_tokenizer("gpt2")
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.ByteLevel(use_regex=False)])
    tok.post_processor = processors.RobertaProcessing(
        ("<|im_end|>", tok.token_to_id("<|im_end|>")),
        ("<|im_start|>", tok.token_to_id("<|im_start|>")))
    return tok


def _llama3_prefix_space():
    tok = build_tokenizer("llama3")
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False),
    ])
    tok.add_tokens([AddedToken("world", single_word=True, rstrip=True)])
    return tok


def _metaspace_always():
    tok = build_tokenizer("sentencepiece")
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=False)
    tok.decoder = decoders.Metaspace(prepend_scheme="always")
    # A special token matched after normalization: "[MASK]" lowercases to "[mask]".
    tok.add_special_tokens([AddedToken("[MASK]", normalized=True)])
    return tok


def _metaspace_never_unk():
    tok = _with_model(build_tokenizer("sentencepiece"), byte_fallback=False, fuse_unk=False)
    tok.normalizer = normalizers.NFD()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never", split=True)
    tok.decoder = decoders.Metaspace(prepend_scheme="never")
    return tok


def _sentencepiece_regex_decoder():
    tok = build_tokenizer("sentencepiece")
    tok.decoder = decoders.Sequence([
        decoders.Replace(Regex("\u2581+"), " "),
        decoders.ByteFallback(),
        decoders.Fuse(),
        decoders.Strip(content=" ", left=2, right=0),
    ])
    return tok


def _bert_cased():
    tok = build_tokenizer("bert")
    tok.normalizer = normalizers.BertNormalizer(
        lowercase=False, strip_accents=None, handle_chinese_chars=False)
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return tok


def _bpe_affixes():
    """BPE with continuing_subword_prefix "##" and end_of_word_suffix "</w>".

    The trainer breaks ties differently from run to run with these options, so a plain BPE
    is trained and each token and merge is written in the four affixed forms instead.
    """
    plain = Tokenizer(models.BPE(unk_token="[UNK]"))
    plain.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"], show_progress=False)
    plain.train_from_iterator(_corpus_lines(), trainer)
    model = json.loads(plain.to_str())["model"]

    def forms(token):
        return [token, "##" + token, token + "</w>", "##" + token + "</w>"]

    tokens = [t for t, _ in sorted(model["vocab"].items(), key=lambda item: item[1])]
    vocab = {"[UNK]": 0}
    for token in tokens[1:]:
        for form in forms(token):
            vocab[form] = len(vocab)
    merges = []
    for left, right in model["merges"]:
        for head in (left, "##" + left):
            for tail in ("##" + right, "##" + right + "</w>"):
                merges.append((head, tail))
                vocab.setdefault(head + tail[2:], len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="[UNK]",
                               continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.add_special_tokens(["[UNK]"])
    return tok


def _word_level():
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordLevelTrainer(
        vocab_size=400, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False)
    tok.train_from_iterator(_corpus_lines(), trainer)
    tok.post_processor = processors.BertProcessing(
        ("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]")))
    return tok


def _word_level_ctc():
    tok = _word_level()
    tok.decoder = decoders.CTC(pad_token="[UNK]", word_delimiter_token="the", cleanup=True)
    return tok


VARIANTS = {
    "gpt2_prefix_space": _gpt2_prefix_space,
    "split_removed": _split_removed,
    "split_next_contiguous": _split_next_contiguous,
    "whitespace_punctuation": _whitespace_punctuation,
    "whitespace_roberta": _whitespace_roberta,
    "llama3_prefix_space": _llama3_prefix_space,
    "metaspace_always": _metaspace_always,
    "metaspace_never_unk": _metaspace_never_unk,
    "sentencepiece_regex_decoder": _sentencepiece_regex_decoder,
    "bert_cased": _bert_cased,
    "bpe_affixes": _bpe_affixes,
    "word_level": _word_level,
    "word_level_ctc": _word_level_ctc,
}


def _decoded(tok, ids):
    return {
        "ids": ids,
        "decode_skip_special": tok.decode(ids, skip_special_tokens=True),
        "decode_keep_special": tok.decode(ids, skip_special_tokens=False),
    }


def golden(tok, fixture_path, cases):
    """The golden record of `tok` over `cases` (a list of {name, text})."""
    records = []
    for case in cases:
        record = {"name": case["name"], "text": case["text"]}
        for key, add_special in (("with_special", True), ("without_special", False)):
            encoding = tok.encode(case["text"], add_special_tokens=add_special)
            record[key] = {"tokens": encoding.tokens, **_decoded(tok, encoding.ids)}
        records.append(record)
    added = [{"id": id_, "content": token.content, "special": token.special}
             for id_, token in sorted(tok.get_added_tokens_decoder().items())]
    return {
        "tokenizers_version": tokenizers.__version__,
        "tokenizer": fixture_path.relative_to(ROOT).as_posix(),
        "vocab_size": tok.get_vocab_size(with_added_tokens=True),
        "added_tokens": added,
        "cases": records,
    }


def to_text(record):
    """JSON with one line per added token and per case, so diffs stay readable."""
    def dump(value):
        return json.dumps(value, ensure_ascii=True)

    lines = ["{"]
    for key, value in record.items():
        if isinstance(value, list):
            items = ",\n".join(f"  {dump(item)}" for item in value)
            lines.append(f" {dump(key)}: [\n{items}\n ],")
        else:
            lines.append(f" {dump(key)}: {dump(value)},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines) + "\n}\n"


def main():
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    builders = {style: (lambda style=style: build_tokenizer(style)) for style in STYLES}
    builders.update(VARIANTS)
    GOLDENS_DIR.mkdir(parents=True, exist_ok=True)
    for name, build in builders.items():
        tok = build()
        fixture = FIXTURES_DIR / name / "tokenizer.json"
        fixture.parent.mkdir(parents=True, exist_ok=True)
        tok.save(str(fixture))
        # Goldens come from the saved file, exactly what canrun will read.
        tok = Tokenizer.from_file(str(fixture))
        record = golden(tok, fixture, cases)
        out = GOLDENS_DIR / f"{name}.json"
        out.write_text(to_text(record), encoding="ascii")
        print(f"{name}: {len(cases)} cases -> {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
