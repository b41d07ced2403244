#!/usr/bin/env python3
"""Builds data/catalog.jsonl, the support lab's model catalog, from the shared snapshot.

Input: ../shared/catalog/models.jsonl (see PROVENANCE.md beside it): one Hub model per line
with its real config values, parameter count, licence, popularity snapshots and sources.
Output: one row per model with the same id, task, model_type, params_b, license, config and
sources, plus what the lab adds:

  popularity  downloads: the latest snapshot's count, its rank among the models of the same
              task, the snapshot date and source; trending: rank null with a note, because no
              snapshot records a trending signal (it is not invented here).
  selected    whether the sweep tests the model, by the rule below.
  exclusion   for a model not selected: the first selection criterion it fails, as a reason.
              "architecture not supported: X" is never written here: canrun computes it at run
              time from its architecture registry, so it disappears when a family lands.
  corrections values the snapshot lacks that its PROVENANCE.md states, with that source.

Selection rule (a model is selected when all hold):
  1. task is text-generation (the engine has no vision tower yet);
  2. model_type is supported today or next on the roadmap (FAMILIES below);
  3. popular: at least MIN_DOWNLOADS recent downloads in the latest popularity snapshot;
  4. its weights fit the trn2 profile, 16 cores of 24 GiB, at bf16: params_b * 2 bytes
     <= 16 * 24 GiB. This is a selection bound on the weights alone; the planner's full
     estimate (KV cache, activations, overhead, divisibility) decides the cores at check time.
A model failing 4 is excluded as "needs more than 16 cores"; one failing 1-3, or whose params_b
is unknown, as "not prioritized yet".

Usage: python3 tools/build_catalog.py [--source FILE] [--out FILE]
"""
import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "catalog" / "models.jsonl"
DEFAULT_OUT = REPO_ROOT / "data" / "catalog.jsonl"

TASKS = ("text-generation", "image-text-to-text")
SELECTED_TASK = "text-generation"
# Supported today (src/models) and the Llama-like families planned next.
FAMILIES = {"llama", "mistral", "qwen2", "qwen3",
            "qwen3_moe", "mixtral", "phi3", "gemma2", "gemma3_text"}
MIN_DOWNLOADS = 100_000
TRN2_BYTES = 16 * 24 * 2**30
BF16_BYTES = 2

LATEST_SNAPSHOT = "llmfit_2026_05"
EARLIER_SNAPSHOTS = ("llmfit_2026_02",)
TRENDING_NOTE = ("no trending rank: the snapshots record Hub downloads and likes only, "
                 "and no dated trending listing was available to take it from")

# PROVENANCE.md, caveats: "two records have a null model_type (phi-4 is phi3, Qwen3-4B is
# qwen3 in their published configs)".
MODEL_TYPE_CORRECTIONS = {"microsoft/phi-4": "phi3", "Qwen/Qwen3-4B": "qwen3"}
CORRECTION_SOURCE = "shared/catalog/PROVENANCE.md, caveats (value of the published config.json)"


def downloads(record, snapshot):
    entry = (record.get("popularity") or {}).get(snapshot) or {}
    return entry if entry.get("hf_downloads") else None


def downloads_ranks(records):
    """Rank 1 = most downloads in the latest snapshot, separately for each task."""
    ranks = {}
    for task in TASKS:
        counted = [r for r in records if r["task"] == task and downloads(r, LATEST_SNAPSHOT)]
        counted.sort(key=lambda r: (-downloads(r, LATEST_SNAPSHOT)["hf_downloads"], r["id"]))
        ranks.update({r["id"]: rank for rank, r in enumerate(counted, start=1)})
    return ranks


def popularity(record, rank):
    latest = downloads(record, LATEST_SNAPSHOT)
    source = record.get("popularity") or {}
    result = {
        "downloads": {
            "count": latest["hf_downloads"] if latest else None,
            "rank": rank,
            "as_of": latest["as_of_snapshot"] if latest else None,
            "source": latest["source"] if latest else None,
            "semantics": source.get("semantics"),
        },
        "trending": {"rank": None, "as_of": None, "source": None, "note": TRENDING_NOTE},
        "likes": latest.get("hf_likes") if latest else None,
        "earlier": [
            {"downloads": e["hf_downloads"], "as_of": e["as_of_snapshot"], "source": e["source"]}
            for e in (downloads(record, s) for s in EARLIER_SNAPSHOTS) if e
        ],
    }
    if not latest:
        result["downloads"]["note"] = "not in the popularity snapshots"
    if "anomaly" in source:
        result["anomaly"] = source["anomaly"]
    return result


def exclusion(record, pop):
    """None when the selection rule holds, else the reason of the first criterion it fails."""
    count = pop["downloads"]["count"]
    if record["task"] != SELECTED_TASK or record["model_type"] not in FAMILIES:
        return "not prioritized yet"
    if count is None or count < MIN_DOWNLOADS:
        return "not prioritized yet"
    if record["params_b"] is None:
        return "not prioritized yet"
    if record["params_b"] * 1e9 * BF16_BYTES > TRN2_BYTES:
        return "needs more than 16 cores"
    return None


def catalog_row(record, rank):
    corrections = []
    model_type = record["model_type"]
    if model_type is None and record["id"] in MODEL_TYPE_CORRECTIONS:
        model_type = MODEL_TYPE_CORRECTIONS[record["id"]]
        corrections.append({"field": "model_type", "was": None, "now": model_type,
                            "source": CORRECTION_SOURCE})
    if record["task"] not in TASKS or not model_type:
        sys.exit(f"{record['id']}: unexpected task {record['task']!r} or model_type {model_type!r}")
    row = dict(record, model_type=model_type)
    pop = popularity(record, rank)
    reason = exclusion(row, pop)
    row.update(popularity=pop, selected=reason is None, exclusion=reason, corrections=corrections)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    records = [json.loads(line) for line in args.source.read_text().splitlines() if line.strip()]
    ids = [r["id"] for r in records]
    if len(ids) != len(set(ids)):
        sys.exit(f"{args.source}: duplicate model ids")
    ranks = downloads_ranks(records)
    rows = [catalog_row(r, ranks.get(r["id"])) for r in records]

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    for task in TASKS:
        in_task = [r for r in rows if r["task"] == task]
        print(f"{task}: {sum(r['selected'] for r in in_task)} selected of {len(in_task)}")


if __name__ == "__main__":
    main()
