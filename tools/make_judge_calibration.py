#!/usr/bin/env python3
"""Writes data/judge_calibration.jsonl: the texts the judge's threshold is calibrated on.

Each fluent continuation below is written out by hand; from each, two garbled ones are made the
ways broken generations look: its words in a shuffled order, and a salad of word pieces drawn
from all continuations (fixed seed). `canrun judge --calibrate data/judge_calibration.jsonl`
scores them and prints the threshold and its accuracy.
"""
import argparse
import json
import random
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

FLUENT = [
    ("The capital of France is", " Paris, a city known for the Eiffel Tower and its museums."),
    ("Water boils at", " one hundred degrees Celsius at sea level."),
    ("The best way to learn a language is", " to speak it every day with people who know it well."),
    ("My favourite season is autumn because", " the leaves turn red and the air feels cool and fresh."),
    ("To make a cup of tea, first", " boil some water, then pour it over the tea bag and wait."),
    ("The cat sat on the", " mat and watched the birds outside the window."),
    ("In the morning I usually", " drink a coffee and read the news before going to work."),
    ("The train to London leaves", " at nine o'clock from the main station."),
    ("Computers are useful because", " they can store large amounts of information and work very fast."),
    ("The children played in the park", " until the sun went down and their parents called them home."),
    ("A good night's sleep", " helps the body recover and keeps the mind sharp."),
    ("She opened the letter and", " smiled when she saw that it came from her old friend."),
]


def shuffled(text, rng):
    words = text.split()
    while True:
        rng.shuffle(words)
        if " ".join(words) != text.strip():
            return " " + " ".join(words)


def salad(rng, pieces, length):
    return " " + "".join(rng.choice(pieces) for _ in range(length))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "data" / "judge_calibration.jsonl")
    args = parser.parse_args()
    rng = random.Random(20261203)
    pieces = sorted({word[:cut] for _, text in FLUENT for word in text.split() for cut in (2, 3) if len(word) > cut})
    rows = []
    for prompt, continuation in FLUENT:
        rows.append({"prompt": prompt, "continuation": continuation, "fluent": True})
        rows.append({"prompt": prompt, "continuation": shuffled(continuation, rng), "fluent": False})
        rows.append({"prompt": prompt, "continuation": salad(rng, pieces, len(continuation.split())), "fluent": False})
    args.out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    print(f"wrote {len(rows)} texts to {args.out}")


if __name__ == "__main__":
    main()
