"""Builds small tokenizers in the three pipeline styles canrun must reproduce.

Each is trained with the `tokenizers` library on tests/fixtures/tokenizer_corpus.txt,
so the result is deterministic and small:
  gpt2         byte-level BPE (GPT-2, SmolLM): ByteLevel pre-tokenizer with its regex
  llama3       regex byte-level BPE (Llama-3, Qwen2): Split with the Llama-3 regex,
               ByteLevel without regex, ignore_merges, TemplateProcessing with a BOS
  sentencepiece Metaspace pre-tokenizer, BPE with byte_fallback and <unk>,
               Replace/ByteFallback/Fuse/Strip decoders, TemplateProcessing with <s>
  llama2       Llama-2/Mistral as converted from SentencePiece: Prepend("▁") and
               Replace(" ", "▁") normalizers, no pre-tokenizer, byte tokens <0x00>..
               in the model vocabulary (not added tokens), byte_fallback and <unk>
  bert         WordPiece: BertNormalizer, BertPreTokenizer, [CLS] $A [SEP], a
               single-word [MASK] that swallows the space on its left
"""
import json

from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "tokenizer_corpus.txt"

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
STYLES = ("gpt2", "llama3", "sentencepiece", "llama2", "bert")


def _corpus_lines():
    return CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)


def _gpt2(vocab_size):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus_lines(), trainer)
    return tok


def _llama3(vocab_size):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus_lines(), trainer)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            pair="<|begin_of_text|> $A <|begin_of_text|> $B",
            special_tokens=[("<|begin_of_text|>", bos)],
        ),
    ])
    # A non-special added token exercises the normalized/lstrip paths.
    tok.add_tokens([AddedToken(" canrun", lstrip=False, rstrip=False, normalized=True)])
    return tok


def _sentencepiece(vocab_size):
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence([
        decoders.Replace("▁", " "),
        decoders.ByteFallback(),
        decoders.Fuse(),
        decoders.Strip(content=" ", left=1, right=0),
    ])
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size + 256,
        special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens,
        show_progress=False,
    )
    tok.train_from_iterator(_corpus_lines(), trainer)
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)])
    tok.add_special_tokens([AddedToken("<|user|>", single_word=True, lstrip=True, rstrip=True)])
    return tok


def _llama2(vocab_size):
    # Trained per word (Metaspace) as SentencePiece merges never cross '▁'; the
    # pipeline is then switched to the normalizer-only form the converters write.
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    tok.train_from_iterator(_corpus_lines(), trainer)
    # Byte tokens live in the model vocabulary right after the specials, as in Llama-2.
    data = json.loads(tok.to_str())
    old_vocab = data["model"]["vocab"]
    vocab = {t: i for t, i in old_vocab.items() if i < 3}
    vocab.update({f"<0x{b:02X}>": 3 + b for b in range(256)})
    vocab.update({t: i + 256 for t, i in old_vocab.items() if i >= 3})
    data["model"]["vocab"] = vocab
    data["added_tokens"] = [dict(t) for t in data["added_tokens"] if t["id"] < 3]
    data["pre_tokenizer"] = None
    tok = Tokenizer.from_str(json.dumps(data))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([
        decoders.Replace("▁", " "),
        decoders.ByteFallback(),
        decoders.Fuse(),
        decoders.Strip(content=" ", left=1, right=0),
    ])
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)])
    return tok


def _bert(vocab_size):
    # The WordPiece trainer breaks ties differently from run to run; a plain BPE
    # vocabulary is stable, and each of its tokens also serves as a "##" continuation.
    bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.normalizer = normalizers.BertNormalizer(lowercase=True)
    bpe.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size // 2, special_tokens=specials,
                                  show_progress=False)
    bpe.train_from_iterator(_corpus_lines(), trainer)
    pieces = [t for t, _ in sorted(bpe.get_vocab().items(), key=lambda item: item[1])
              if t not in specials]
    vocab = {t: i for i, t in enumerate(specials + pieces + ["##" + p for p in pieces])}

    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = bpe.normalizer
    tok.pre_tokenizer = bpe.pre_tokenizer
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.add_special_tokens(specials)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.add_special_tokens([AddedToken("[MASK]", single_word=True, lstrip=True)])
    return tok


def build_tokenizer(style: str, vocab_size: int = 400) -> Tokenizer:
    """Returns a freshly trained tokenizer of the given style (see STYLES)."""
    builders = {"gpt2": _gpt2, "llama3": _llama3, "sentencepiece": _sentencepiece,
                "llama2": _llama2, "bert": _bert}
    if style not in builders:
        raise ValueError(f"unknown tokenizer style {style!r}; expected one of {STYLES}")
    return builders[style](vocab_size)


def special_token_ids(tok: Tokenizer) -> dict:
    """bos/eos ids for a tokenizer built by build_tokenizer."""
    names = {"gpt2": ("<|endoftext|>", "<|endoftext|>"),
             "llama3": ("<|begin_of_text|>", "<|end_of_text|>"),
             "sentencepiece": ("<s>", "</s>"),
             "bert": ("[CLS]", "[SEP]")}
    for bos, eos in names.values():
        if tok.token_to_id(bos) is not None:
            return {"bos_token_id": tok.token_to_id(bos), "eos_token_id": tok.token_to_id(eos)}
    raise ValueError("tokenizer has none of the known bos/eos tokens")
