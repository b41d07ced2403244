"""Makes the tiny random encoder checkpoints in tests/fixtures/encoders and their goldens.

Besides the sentence-transformers folders, cross-encoders (*ForSequenceClassification): their
goldens record sentence-transformers' CrossEncoder scores of a query against a few documents,
with the pairs' token ids and token type ids.

Each fixture is a sentence-transformers model folder: the encoder written by transformers' own
save_pretrained (random weights, fixed seed), a bert-style tokenizer from
tools/tokenizer_styles.py, and the sentence-transformers modules (modules.json, Pooling, Dense,
Normalize) each fixture exercises. Its golden, tests/goldens/encoders/<name>.json, records for a
few texts their token ids, transformers' last hidden state of every token (float32, eager
attention) and sentence-transformers' embeddings of the texts (batched and padded as it runs
them). canrun's parity tests check its encoder and embedding pipeline against these files, so
CI needs no torch.

Run with the tools venv (tools/requirements-tools.txt, plus sentence-transformers):
    python tools/make_encoder_fixtures.py [NAME...]
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import sentence_transformers
import torch
import transformers
from safetensors.torch import load_file, save_file
from sentence_transformers import CrossEncoder, SentenceTransformer
from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification

from tokenizer_styles import build_tokenizer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES_DIR = ROOT / "tests" / "fixtures" / "encoders"
GOLDENS_DIR = ROOT / "tests" / "goldens" / "encoders"
# Spread enough that the layers do not wash the inputs out (the default init's 0.02 gives
# nearly equal hidden states for every token).
WEIGHT_STD = 0.3
TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=40, hidden_act="gelu", layer_norm_eps=1e-12)
# A causal LM family's base model as an embedder (saved as Qwen3Model, MistralModel...).
TINY_DECODER = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=8, max_position_embeddings=64, pad_token_id=0)
# ModernBERT's own names: norm_eps, hidden_activation, local_attention, the two rope thetas; its
# special tokens' ids in the fixtures' vocabulary ([PAD] 0, [CLS] 2, [SEP] 3).
TINY_MODERNBERT = dict(model_type="modernbert", hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                       num_attention_heads=4, max_position_embeddings=64, hidden_activation="gelu", norm_eps=1e-5,
                       local_attention=8, global_rope_theta=1000.0, local_rope_theta=100.0, pad_token_id=0,
                       bos_token_id=2, cls_token_id=2, eos_token_id=3, sep_token_id=3)
TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "Once upon a time, in a small village by the sea, there lived an old fisherman who told stories "
    "to anyone who would listen, day after day, until the tide came in.",
    "a",
]
# Each fixture: its config, and the sentence-transformers modules after the Transformer.
FIXTURES = {
    # all-MiniLM's pipeline: mean pooling, Normalize; max_seq_length cuts the long text.
    "bert_mean": dict(config=dict(TINY, model_type="bert", type_vocab_size=2, pad_token_id=0),
                      pooling={"pooling_mode": "mean"}, dense=None, normalize=True, max_seq_length=24),
    # RoBERTa's positions from padding_idx + 1; CLS pooling, a Dense layer with Tanh.
    "roberta_cls_dense": dict(config=dict(TINY, model_type="roberta", type_vocab_size=1, pad_token_id=1,
                                          max_position_embeddings=42),
                              pooling={"pooling_mode": "cls"}, dense=[(32, 16, True, "Tanh")], normalize=False,
                              max_seq_length=40),
    # Every other pooling mode at once, concatenated, behind a prompt left out of the pooling.
    "xlm_roberta_modes": dict(config=dict(TINY, model_type="xlm-roberta", type_vocab_size=1, pad_token_id=1,
                                          max_position_embeddings=42),
                              pooling={"pooling_mode": ["max", "mean_sqrt_len_tokens", "weightedmean",
                                                        "lasttoken"],
                                       "include_prompt": False},
                              dense=None, normalize=False, max_seq_length=40,
                              prompts={"query": "query: ", "passage": "passage: "}, prompt_name="query"),
    # DistilBERT's sizes under its own names, no token types: the tokenizer hands none.
    "distilbert_mean": dict(config=dict(model_type="distilbert", dim=32, hidden_dim=64, n_layers=2, n_heads=4,
                                        max_position_embeddings=40, activation="gelu", pad_token_id=0),
                            pooling={"pooling_mode": "mean"}, dense=None, normalize=True, max_seq_length=24,
                            input_names=["input_ids", "attention_mask"]),
    # Qwen3-Embedding's pipeline: the causal base model, the last token's state, Normalize.
    "qwen3_last_token": dict(config=dict(TINY_DECODER, model_type="qwen3"), pooling={"pooling_mode": "lasttoken"},
                             dense=None, normalize=True, max_seq_length=40,
                             prompts={"query": "Instruct: find the text\nQuery:"}, prompt_name="query"),
    # e5-mistral's: the same over Mistral's layout.
    "mistral_last_token": dict(config=dict(TINY_DECODER, model_type="mistral", sliding_window=None),
                               pooling={"pooling_mode": "lasttoken"}, dense=None, normalize=True,
                               max_seq_length=40),
    # EmbeddingGemma's: bidirectional attention (a sliding layer's window both ways), mean
    # pooling, two Dense layers without bias or activation, Normalize.
    "gemma3_bidirectional": dict(config=dict(TINY_DECODER, model_type="gemma3_text", use_bidirectional_attention=True,
                                             sliding_window=8, query_pre_attn_scalar=8,
                                             layer_types=["sliding_attention", "full_attention"]),
                                 pooling={"pooling_mode": "mean"},
                                 dense=[(32, 48, False, "Identity"), (48, 24, False, "Identity")], normalize=True,
                                 max_seq_length=40),
    # all-mpnet-base-v2's pipeline: MPNet (positions from 2, the relative position bias), mean
    # pooling, Normalize; texts long enough for the bias's logarithmic buckets.
    "mpnet_mean": dict(config=dict(TINY, model_type="mpnet", max_position_embeddings=42, pad_token_id=1),
                       pooling={"pooling_mode": "mean"}, dense=None, normalize=True, max_seq_length=40,
                       input_names=["input_ids", "attention_mask"]),
    # modernbert-embed's pipeline: ModernBERT (global, local, global layers, each kind with its
    # own rope theta; a local window of |q - k| <= 4, narrower than three of the texts; every
    # bias on), mean pooling, Normalize.
    "modernbert_mean": dict(config=dict(TINY_MODERNBERT, global_attn_every_n_layers=2, norm_bias=True,
                                        attention_bias=True, mlp_bias=True),
                            pooling={"pooling_mode": "mean"}, dense=None, normalize=True, max_seq_length=40,
                            input_names=["input_ids", "attention_mask"]),
    # nomic-embed-text's pipeline: NomicBERT (rotary, SwiGLU, fused Wqkv: save_pretrained writes
    # the Hub's original tensor names), mean pooling, Normalize. config.json carries the original
    # remote code's keys beside the ones transformers reads, as the Hub's does.
    "nomic_bert_mean": dict(config=dict(TINY, model_type="nomic_bert", num_hidden_layers=3, hidden_act="silu",
                                        max_position_embeddings=64, type_vocab_size=2, pad_token_id=0,
                                        rope_parameters={"rope_type": "default", "rope_theta": 1000.0}),
                            original_config=dict(n_embd=32, n_layer=3, n_head=4, n_inner=64, n_positions=64,
                                                 activation_function="swiglu", rotary_emb_base=1000,
                                                 rotary_emb_fraction=1.0, rotary_emb_interleaved=False,
                                                 rotary_scaling_factor=None, prenorm=False, qkv_proj_bias=False,
                                                 mlp_fc1_bias=False, mlp_fc2_bias=False, layer_norm_epsilon=1e-12),
                            pooling={"pooling_mode": "mean"}, dense=None, normalize=True, max_seq_length=40),
    # gte-multilingual-base's pipeline: GTE (rotary, fused biased qkv, [up; gate] fused), CLS
    # pooling, Normalize. config.json carries the remote code's keys and rope_theta as the Hub's
    # does (model_type stays transformers' "gte": 5.23.0 does not map the Hub's "new").
    "gte_cls": dict(config=dict(TINY, model_type="gte", type_vocab_size=1, pad_token_id=1,
                                max_position_embeddings=64),
                    original_config=dict(position_embedding_type="rope", layer_norm_type="layer_norm",
                                         pack_qkv=True, unpad_inputs=False, use_memory_efficient_attention=False,
                                         logn_attention_scale=False, logn_attention_clip1=False,
                                         rope_theta=20000.0),
                    drop_config=["rope_parameters"],
                    pooling={"pooling_mode": "cls"}, dense=None, normalize=True, max_seq_length=40,
                    input_names=["input_ids", "attention_mask"]),
}


# Cross-encoders: ms-marco-MiniLM's layout (BERT, raw logits: its config names the Identity
# activation) and bge-reranker's (XLM-RoBERTa, no activation named: sigmoid for one label).
CROSS_ENCODERS = {
    "bert_cross_encoder": dict(config=dict(TINY, model_type="bert", type_vocab_size=2, pad_token_id=0, num_labels=1,
                                           sbert_ce_default_activation_function="torch.nn.modules.linear.Identity"),
                               max_length=40, model_input_names=["input_ids", "token_type_ids", "attention_mask"]),
    "xlm_roberta_cross_encoder": dict(config=dict(TINY, model_type="xlm-roberta", type_vocab_size=1, pad_token_id=1,
                                                  max_position_embeddings=42, num_labels=1),
                                      max_length=40, model_input_names=["input_ids", "attention_mask"]),
    # DistilBERT's head (pre_classifier, ReLU, classifier) and MPNet's (RoBERTa's), two labels each:
    # the scores are the logits, no activation.
    "distilbert_cross_encoder": dict(config=dict(model_type="distilbert", dim=32, hidden_dim=64, n_layers=2,
                                                 n_heads=4, max_position_embeddings=40, pad_token_id=0,
                                                 num_labels=2),
                                     max_length=40, model_input_names=["input_ids", "attention_mask"]),
    "mpnet_cross_encoder": dict(config=dict(TINY, model_type="mpnet", max_position_embeddings=42, pad_token_id=1,
                                            num_labels=2),
                                max_length=40, model_input_names=["input_ids", "attention_mask"]),
    # ModernBERT's head over the mean of the tokens: head.dense (no bias), GELU, head.norm (no
    # bias: norm_bias false, as in the published models), classifier; one label, Sigmoid.
    "modernbert_cross_encoder": dict(config=dict(TINY_MODERNBERT, classifier_pooling="mean", num_labels=1),
                                     max_length=40, model_input_names=["input_ids", "attention_mask"]),
    # gte-multilingual-reranker-base's layout: GTE's pooler (dense, tanh on the first token), then
    # classifier; one label, Sigmoid. transformers saves the base model under "gte."; the fixture
    # stores it under the Hub's "new.", which transformers loads as the same model.
    "gte_cross_encoder": dict(config=dict(TINY, model_type="gte", type_vocab_size=1, pad_token_id=1,
                                          max_position_embeddings=64, num_labels=1),
                              max_length=40, model_input_names=["input_ids", "attention_mask"],
                              stored_prefix=("gte.", "new.")),
}
QUERY = "how does a fox jump over a dog"
DOCUMENTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Once upon a time, in a small village by the sea, there lived an old fisherman who told stories "
    "to anyone who would listen, day after day, until the tide came in.",
    "Hello world",
    "a",
]


def write_json(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def randomize(model, seed):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name.lower() and name.endswith("weight"):
                parameter.copy_(torch.empty_like(parameter).uniform_(0.5, 1.5, generator=generator))
            else:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * WEIGHT_STD)


def new_folder(name, max_length, input_names=None):
    """An empty fixture folder with a bert-style tokenizer of `max_length` tokens; `input_names`:
    what it hands the model (a BERT tokenizer hands its pairs' token type ids, a generic one does not)."""
    folder = FIXTURES_DIR / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tok = build_tokenizer("bert")
    tok.save(str(folder / "tokenizer.json"))
    tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "cls_token": "[CLS]", "sep_token": "[SEP]",
                        "pad_token": "[PAD]", "unk_token": "[UNK]", "mask_token": "[MASK]",
                        "model_max_length": max_length}
    if input_names:
        tokenizer_config["model_input_names"] = input_names
    write_json(folder / "tokenizer_config.json", tokenizer_config)
    return folder, tok


def make(name, spec, seed):
    folder, tok = new_folder(name, spec["max_seq_length"], spec.get("input_names"))
    config = AutoConfig.for_model(**dict(spec["config"], vocab_size=tok.get_vocab_size()))
    torch.manual_seed(seed)
    # An encoder's pooler is a task head's part, which the embedding pipeline never uses.
    extra = {"add_pooling_layer": False} if config.model_type in ("bert", "roberta", "xlm-roberta", "mpnet") else {}
    model = AutoModel.from_config(config, attn_implementation="eager", **extra)
    randomize(model, seed)
    model.eval()
    model.save_pretrained(folder)
    if spec.get("original_config"):
        saved = json.loads((folder / "config.json").read_text())
        merged = dict(saved, **spec["original_config"])
        write_json(folder / "config.json", {key: value for key, value in merged.items()
                                            if key not in spec.get("drop_config", ())})
        model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()

    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    write_json(folder / "sentence_bert_config.json", {"max_seq_length": spec["max_seq_length"],
                                                      "do_lower_case": False})
    write_json(folder / "1_Pooling" / "config.json",
               dict(spec["pooling"], embedding_dimension=config.hidden_size))
    for number, (in_features, out_features, bias, activation) in enumerate(spec["dense"] or []):
        idx = len(modules)
        dense_dir = folder / f"{idx}_Dense"
        generator = torch.Generator().manual_seed(seed + 1 + number)
        tensors = {"linear.weight": torch.randn(out_features, in_features, generator=generator) * 0.3}
        if bias:
            tensors["linear.bias"] = torch.randn(out_features, generator=generator) * 0.3
        dense_dir.mkdir()
        save_file(tensors, str(dense_dir / "model.safetensors"))
        module = "linear" if activation == "Identity" else "activation"
        write_json(dense_dir / "config.json", {"in_features": in_features, "out_features": out_features,
                                               "bias": bias,
                                               "activation_function": f"torch.nn.modules.{module}.{activation}"})
        modules.append({"idx": idx, "name": str(idx), "path": f"{idx}_Dense",
                        "type": "sentence_transformers.models.Dense"})
    if spec["normalize"]:
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": f"{len(modules)}_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    write_json(folder / "modules.json", modules)
    write_json(folder / "config_sentence_transformers.json",
               {"prompts": spec.get("prompts", {}), "default_prompt_name": None})

    # transformers' hidden states of each text alone, cut at max_seq_length as the pipeline cuts it.
    ids, hidden = [], []
    for text in TEXTS:
        encoding = tok.encode(text)
        row = encoding.ids[: spec["max_seq_length"] - 1] + encoding.ids[-1:] \
            if len(encoding.ids) > spec["max_seq_length"] else encoding.ids
        with torch.no_grad():
            out = model(input_ids=torch.tensor([row])).last_hidden_state[0]
        ids.append(row)
        hidden.append(out.flatten().tolist())

    st = SentenceTransformer(str(folder), device="cpu")
    prompt_name = spec.get("prompt_name")
    embeddings = st.encode(TEXTS, prompt_name=prompt_name, convert_to_numpy=True, batch_size=len(TEXTS))
    golden = {
        "made_by": f"transformers {transformers.__version__}, sentence-transformers "
                   f"{sentence_transformers.__version__}, torch {torch.__version__}",
        "texts": TEXTS,
        "prompt_name": prompt_name,
        "ids": ids,
        "hidden_size": config.hidden_size,
        "hidden": hidden,
        "embeddings": embeddings.astype(np.float64).tolist(),
    }
    write_json(GOLDENS_DIR / f"{name}.json", golden)
    print(f"{name}: {len(TEXTS)} texts, embedding dimension {embeddings.shape[1]}")


def make_cross_encoder(name, spec, seed):
    folder, tok = new_folder(name, spec["max_length"], spec["model_input_names"])
    config = AutoConfig.for_model(**dict(spec["config"], vocab_size=tok.get_vocab_size()))
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    randomize(model, seed)
    model.eval()
    model.save_pretrained(folder)
    if spec.get("stored_prefix"):
        saved, stored = spec["stored_prefix"]
        tensors = load_file(str(folder / "model.safetensors"))
        save_file({stored + key[len(saved):] if key.startswith(saved) else key: value
                   for key, value in tensors.items()}, str(folder / "model.safetensors"), metadata={"format": "pt"})

    pairs = [(QUERY, document) for document in DOCUMENTS]
    encoder = CrossEncoder(str(folder), device="cpu")
    scores = encoder.predict(pairs, batch_size=len(pairs), convert_to_numpy=True, activation_fn=torch.nn.Identity())
    # The folder as saved must load back into the model that was saved (its head included).
    with torch.no_grad():
        batch = encoder.tokenizer([p[0] for p in pairs], [p[1] for p in pairs], padding=True, truncation=True,
                                  max_length=spec["max_length"], return_tensors="pt")
        logits = model(**batch).logits.numpy()
    assert np.allclose(scores, logits.reshape(scores.shape), atol=1e-5), f"{name}: saved folder loads differently"
    scores = encoder.predict(pairs, batch_size=len(pairs), convert_to_numpy=True)
    # The pairs as the CrossEncoder's tokenizer cuts them: longest first, to its max length.
    tok.enable_truncation(max_length=spec["max_length"])
    encoded = [tok.encode(QUERY, document) for document in DOCUMENTS]
    golden = {
        "made_by": f"transformers {transformers.__version__}, sentence-transformers "
                   f"{sentence_transformers.__version__}, torch {torch.__version__}",
        "query": QUERY,
        "documents": DOCUMENTS,
        "ids": [e.ids for e in encoded],
        "type_ids": [e.type_ids for e in encoded],
        "scores": np.asarray(scores, dtype=np.float64).reshape(len(pairs), -1).tolist(),
    }
    write_json(GOLDENS_DIR / f"{name}.json", golden)
    print(f"{name}: scores {golden['scores']}")


def main(names):
    """Makes every fixture, or those `names` lists (each keeps its seed)."""
    for seed, (name, spec) in enumerate(FIXTURES.items()):
        if not names or name in names:
            make(name, spec, 1000 + seed)
    for seed, (name, spec) in enumerate(CROSS_ENCODERS.items()):
        if not names or name in names:
            make_cross_encoder(name, spec, 2000 + seed)


if __name__ == "__main__":
    main(sys.argv[1:])
