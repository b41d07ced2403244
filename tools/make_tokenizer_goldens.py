"""Writes the tokenizer parity fixtures and goldens from the `tokenizers` library.

For every style of tools/tokenizer_styles.py, and for the pipeline variants below (the
same trained models with other normalizers, pre-tokenizers, decoders, post-processors,
truncation and padding, and Unigram models trained here, so every supported component is
covered), this writes

  tests/fixtures/tokenizers/<name>/tokenizer.json
  tests/goldens/tokenizers/<name>.json

The golden holds, for every case of tests/fixtures/tokenizer_cases.json, the ids, tokens,
type ids and attention mask of encode with and without special tokens, and decode of each
of those id lists with skip_special_tokens true and false; the same for encode of each of
its pairs; for some tokenizers, the pairs and a few cases truncated in every strategy and
direction; plus the vocabulary size and the added tokens. Encodings are those of
Tokenizer.from_file(...).encode, so a fixture's own truncation and padding apply; where the
library fails, the record holds its error instead.
tests/unit/tokenizer_parity_test.cpp checks canrun's tokenizer against these files.

Run from anywhere:  python3 tools/make_tokenizer_goldens.py
"""
import json
import os
import struct
import unicodedata
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


def _precompiled_charsmap(rules):
    """SentencePiece's precompiled_charsmap for `rules` (key -> replacement): a Darts double
    array over the keys' UTF-8 bytes, then the NUL-terminated replacements, in the layout the
    library's spm_precompiled crate reads."""
    blob = bytearray()
    value_of = {}
    for replacement in sorted(set(rules.values())):
        value_of[replacement] = len(blob)
        blob += replacement.encode("utf-8") + b"\0"
    trie = {}
    for key, replacement in rules.items():
        node = trie
        for byte in key.encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = value_of[replacement]  # None marks a key's end

    # A unit: label in bits 0-7, bit 8 when a key ends here, offset to its children's base from
    # bit 10; the value of a key sits at that base (label 0) with bit 31 set.
    units = {0: 0}
    bases = set()
    pending = [(0, trie)]
    while pending:
        position, node = pending.pop(0)
        labels = sorted(label for label in node if label is not None)
        slots = labels + ([0] if None in node else [])
        base = 1
        while base in bases or any((base ^ slot) in units or (base ^ slot) == 0 for slot in slots):
            base += 1
        bases.add(base)
        assert position ^ base < 1 << 21
        units[position] |= (position ^ base) << 10
        if None in node:
            units[base] = node[None] | 1 << 31
        for label in labels:
            child = node[label]
            units[base ^ label] = label | (256 if None in child else 0)
            pending.append((base ^ label, child))
    # Every lookup stays inside the array: it ends past the last block of 256 any base uses.
    size = max(max(units) + 1, max(base | 0xFF for base in bases) + 1)
    array = [units.get(position, 0) for position in range(size)]
    return struct.pack(f"<I{size}I", 4 * size, *array) + bytes(blob)


def _charsmap_rules():
    """Rules in the manner of SentencePiece's nmt_nfkc, for the characters the cases hold."""
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    rules = {}
    for char in sorted({c for case in cases for c in case["text"]}):
        if unicodedata.normalize("NFKC", char) != char:
            rules[char] = unicodedata.normalize("NFKC", char)
    rules.update({c: " " for c in "\t\n\r\u00a0\u3000\u2003\u2028\u0085"})
    rules.update({c: "" for c in "\u0007\u007f\u00ad\u200b\ufeff\ufe0f"})
    rules.update({
        "\u0000": " ",  # never applies: a NUL byte ends the lookup
        # Whole grapheme clusters shorter than 6 bytes are looked up first, and the shortest key
        # that starts one wins: "\u1e9b\u0323" takes the rule of "\u1e9b", not its own.
        "e\u0301": "\u00e9",
        "A\u030a": "\u00c5",
        "o\u0308\u0304": "\u022b",
        "\u1e9b\u0323": "\u1e69",
        # Keys across clusters, or in clusters of 6 bytes or more, never apply.
        "ab": "[ab]",
        "\u1100\u1161\u11a8": "[gak]",
        "\u2764\ufe0f": "<3",
        "\u0915\u094d\u0937": "[ksa]",
    })
    return rules


def _checked_charsmap():
    rules = _charsmap_rules()
    charsmap = _precompiled_charsmap(rules)
    precompiled = normalizers.Precompiled(charsmap)
    for key, replacement in rules.items():
        if len(key) == 1 and key != "\u0000":
            assert precompiled.normalize_str(key) == replacement, (key, replacement)
    assert precompiled.normalize_str("e\u0301") == "\u00e9"
    assert precompiled.normalize_str("ab") == "ab"
    return charsmap


def _sorted_unigram(tok, specials, extra_pieces=(), byte_fallback=False, digits=6):
    """`tok` with its trained Unigram vocabulary made the same from run to run, and in a stable
    order: scores rounded (their last digits vary), and the characters the trainer appends
    below its pieces (the lowest score, then 0.0001 steps up, in hash order) in character
    order. Scores end rounded to `digits`. `extra_pieces` follow the special tokens, with
    score 0."""
    data = json.loads(tok.to_str())
    model = data["model"]
    trained = [(piece, round(score, 6)) for piece, score in model["vocab"][len(specials):]]
    lowest = min(score for _, score in trained)
    steps = {round(lowest + k * 0.0001, 6) for k in range(len(trained))}
    appended = sorted(piece for piece, score in trained if len(piece) == 1 and score in steps)
    rescored = dict(trained)
    rescored.update({piece: round(lowest + k * 0.0001, 6) for k, piece in enumerate(appended)})
    rounded = {piece: float(round(score, digits)) for piece, score in rescored.items()}
    ordered = sorted(rounded.items(), key=lambda entry: (-entry[1], entry[0]))
    model["vocab"] = ([[piece, 0.0] for piece in specials] + [[piece, 0.0] for piece in extra_pieces]
                      + [list(entry) for entry in ordered])
    model["byte_fallback"] = byte_fallback
    return Tokenizer.from_str(json.dumps(data))


def _unigram_precompiled():
    """XLM-RoBERTa's pipeline: Precompiled then a Replace of space runs, Metaspace "always",
    Unigram with <unk>, <s> $A </s> and <s> $A </s> </s> $B </s>, a <mask> that strips left."""
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([
        normalizers.Precompiled(_checked_charsmap()),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(vocab_size=400, special_tokens=specials, unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(_corpus_lines(), trainer)
    tok = _sorted_unigram(tok, specials)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True)])
    return tok


def _unigram_byte_fallback():
    """T5's pipeline (WhitespaceSplit and Metaspace, $A </s>) on a Unigram with byte_fallback;
    the byte pieces stop short of 4-byte lead bytes, so emoji still come out unknown. Scores
    are whole numbers, so that segmentations tie and the first one found must win."""
    specials = ["<pad>", "</s>", "<unk>"]
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always"),
    ])
    trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=specials, unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(_corpus_lines(), trainer)
    byte_pieces = [f"<0x{b:02X}>" for b in range(0xF0)]
    tok = _sorted_unigram(tok, specials, byte_pieces, byte_fallback=True, digits=0)
    tok.decoder = decoders.Sequence([
        decoders.Replace("\u2581", " "),
        decoders.ByteFallback(),
        decoders.Fuse(),
        decoders.Strip(content=" ", left=1, right=0),
    ])
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", 1)])
    return tok


def _bert_truncation_padding():
    tok = build_tokenizer("bert")
    tok.enable_truncation(16, stride=0, strategy="longest_first", direction="right")
    tok.enable_padding(length=24, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]")
    return tok


def _unigram_only_first_left():
    tok = _unigram_precompiled()
    tok.enable_truncation(12, stride=2, strategy="only_first", direction="left")
    tok.enable_padding(direction="left", pad_id=1, pad_type_id=1, pad_token="<pad>", pad_to_multiple_of=8)
    return tok


def _roberta_only_second():
    tok = _whitespace_roberta()
    tok.enable_truncation(13, strategy="only_second", direction="right")
    tok.enable_padding(length=20, pad_to_multiple_of=6, direction="left", pad_id=0,
                       pad_token="<|endoftext|>")
    return tok


def _llama3_longest_first_left():
    """A stride of 4 is more than the halves a pair is cut to: the library fails there."""
    tok = build_tokenizer("llama3")
    tok.enable_truncation(9, stride=4, strategy="longest_first", direction="left")
    tok.enable_padding()  # BatchLongest: one encoding pads nothing
    return tok


def _word_level_truncation_below_specials():
    """max_length 2: one sequence keeps only its 2 special tokens; a pair, with 3, wraps around
    in the library's subtraction and is not cut at all."""
    tok = _word_level()
    tok.enable_truncation(2)
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
    "unigram_precompiled": _unigram_precompiled,
    "unigram_byte_fallback": _unigram_byte_fallback,
    "bert_truncation_padding": _bert_truncation_padding,
    "unigram_only_first_left": _unigram_only_first_left,
    "roberta_only_second": _roberta_only_second,
    "llama3_longest_first_left": _llama3_longest_first_left,
    "word_level_truncation_below_specials": _word_level_truncation_below_specials,
}

# Tokenizers whose goldens also hold the pairs and a few cases under every truncation strategy
# and direction (canrun's encode_truncated), at each of these lengths.
TRUNCATION_CHECKS = {"bert": (7, 16), "unigram_precompiled": (9, 20), "llama3": (5, 14)}
TRUNCATED_SINGLES = ("ascii_punctuation", "corpus_numbers", "empty")


def _encoded(encode):
    """What `encode()` gives, or the library's error."""
    try:
        encoding = encode()
    except BaseException as error:  # pyo3 panics are BaseExceptions
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return {"error": str(error)}
    return {"tokens": encoding.tokens, "ids": encoding.ids, "type_ids": encoding.type_ids,
            "attention_mask": encoding.attention_mask}


def _with_decodes(tok, record):
    if "ids" in record:
        record["decode_skip_special"] = tok.decode(record["ids"], skip_special_tokens=True)
        record["decode_keep_special"] = tok.decode(record["ids"], skip_special_tokens=False)
    return record


def _both_ways(tok, texts):
    return {key: _with_decodes(tok, _encoded(lambda add=add_special: tok.encode(*texts, add_special_tokens=add)))
            for key, add_special in (("with_special", True), ("without_special", False))}


def _truncations(tok, max_lengths, texts, pairs):
    """Every strategy and direction over `pairs` and a few single `texts`, without padding."""
    records = []
    tok.no_padding()
    inputs = [(a, b) for a, b in pairs] + [(name, None) for name in TRUNCATED_SINGLES]
    for max_length in max_lengths:
        for strategy in ("longest_first", "only_first", "only_second"):
            for direction in ("right", "left"):
                tok.enable_truncation(max_length, strategy=strategy, direction=direction)
                for first, second in inputs:
                    args = (texts[first],) if second is None else (texts[first], texts[second])
                    records.append({"first": first, "second": second, "max_length": max_length,
                                    "strategy": strategy, "direction": direction,
                                    **_with_decodes(tok, _encoded(lambda: tok.encode(*args)))})
    return records


def golden(tok, fixture_path, cases, pairs, truncation_lengths=None):
    """The golden record of `tok` over `cases` (a list of {name, text}) and `pairs` (of names)."""
    texts = {case["name"]: case["text"] for case in cases}
    records = [{"name": case["name"], "text": case["text"], **_both_ways(tok, [case["text"]])}
               for case in cases]
    pair_records = [{"first": first, "second": second, **_both_ways(tok, [texts[first], texts[second]])}
                    for first, second in pairs]
    added = [{"id": id_, "content": token.content, "special": token.special}
             for id_, token in sorted(tok.get_added_tokens_decoder().items())]
    record = {
        "tokenizers_version": tokenizers.__version__,
        "tokenizer": fixture_path.relative_to(ROOT).as_posix(),
        "vocab_size": tok.get_vocab_size(with_added_tokens=True),
        "added_tokens": added,
        "cases": records,
        "pairs": pair_records,
    }
    if truncation_lengths:
        record["truncations"] = _truncations(tok, truncation_lengths, texts, pairs)
    return record


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
    # Where the library panics (a recorded error), its backtrace would flood the output.
    os.environ["RUST_BACKTRACE"] = "0"
    spec = json.loads(CASES.read_text(encoding="utf-8"))
    cases, pairs = spec["cases"], spec["pairs"]
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
        record = golden(tok, fixture, cases, pairs, TRUNCATION_CHECKS.get(name))
        out = GOLDENS_DIR / f"{name}.json"
        out.write_text(to_text(record), encoding="ascii")
        print(f"{name}: {len(cases)} cases, {len(pairs)} pairs -> {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
