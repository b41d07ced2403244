#!/usr/bin/env python3
"""Builds data/catalog.jsonl, the support lab's model catalog, from the shared snapshot.

Input: ../shared/catalog/models.jsonl and ../shared/catalog/encoders.jsonl (see PROVENANCE.md
beside them): one Hub model per line with its real config values, parameter count, licence,
popularity snapshots and sources; an encoder's also with its sentence-transformers pieces
(`sentence_transformers`: modules, pooling, classifier) and `extra_meta`, kept as they are.
Output: one row per model with the same id, task, model_type, params_b, license, config and
sources, plus what the lab adds:

  popularity  downloads: the latest snapshot's count, its rank among the models of the same
              task, the snapshot date and source (an encoder's figures from third-party pages
              under third_party, unranked); trending: rank null with a note, because no
              snapshot records a trending signal (it is not invented here).
  selected    whether the sweep tests the model, by the rule below.
  exclusion   for a model not selected: the first selection criterion it fails, as a reason.
              "architecture not supported: X" is never written here: canrun computes it at run
              time from its architecture registry, so it disappears when a family lands.
  corrections values the snapshot lacks that its PROVENANCE.md states, with that source.

Selection rule (a model is selected when all hold):
  1. its task is one the lab checks: text-generation, image-text-to-text, or an encoder's
     sentence-similarity, feature-extraction or text-ranking (text-classification has no check
     protocol yet);
  2. canrun supports its family for that task: `canrun archs --json` lists its model_type, or a family whose
     classes include one its architectures name (kimi_k2 runs as DeepseekV3ForCausalLM);
  3. it fits the trn2 profile, 16 cores of 24 GiB, by canrun's planner (weights as the engine
     holds the published checkpoint: bf16 as bf16, FP8 as FP8, MXFP4 experts widened to f32; from
     the family's exact parameter count, KV cache, activations, overhead): `canrun archs`
     lists it among its family's models.
  4. an encoder also needs its model_type (null where no config was found), the config values
     that size it (ENCODER_SIZE_FIELDS: the family's defaults would stand in for a missing one,
     which is not the published model) and, for text-ranking, a *ForSequenceClassification class
     in its architectures (the head a cross-encoder scores with), and no sentence-transformers
     module besides Transformer, Pooling and Normalize (a Dense layer's shapes are not recorded,
     so no synthetic checkpoint could hold it).
For an encoder task canrun's family must read the config as an encoder (`canrun catalog --json`'s
family_supported), so a decoder family (qwen3 for Qwen3-Embedding) counts only once canrun
runs it as one.
A model failing 3 is excluded with the planner's reason ("needs more than 16 cores", or "cannot
be split, and needs more than 1 core"), one failing 1 or 2 as "not prioritized yet". `canrun archs` reads the rows written with every model unselected first.

Usage: python3 tools/build_catalog.py [--source FILE] [--out FILE] [--canrun BINARY]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "catalog" / "models.jsonl"
DEFAULT_ENCODERS = REPO_ROOT.parent / "shared" / "catalog" / "encoders.jsonl"
DEFAULT_OUT = REPO_ROOT / "data" / "catalog.jsonl"

GENERATION_TASKS = ("text-generation", "image-text-to-text")
ENCODER_TASKS = ("sentence-similarity", "feature-extraction", "text-ranking", "text-classification")
TASKS = GENERATION_TASKS + ENCODER_TASKS
CHECKED_TASKS = GENERATION_TASKS + ("sentence-similarity", "feature-extraction", "text-ranking")
# What sizes an encoder: without one of these its family's default (BertConfig's 768, 3072...)
# would stand in for the published value.
ENCODER_SIZE_FIELDS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")

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
    # Figures from undated third-party pages (encoders.jsonl), kept under their own keys: they are
    # not comparable with the snapshot's counts, so no rank is taken from them.
    third_party = {key: value for key, value in source.items()
                   if key not in (LATEST_SNAPSHOT, *EARLIER_SNAPSHOTS, "semantics", "anomaly")}
    if third_party:
        result["third_party"] = third_party
    return result


class Registry:
    """What canrun's architecture registry and planner say of the catalog's rows, task by task."""

    def __init__(self, canrun, catalog):
        self.classes, self.fitting, self.plan_reasons, self.supported = {}, set(), {}, set()
        for task in TASKS:
            supported = run_json(canrun, "archs", catalog, task)["supported"]
            self.classes[task] = {f["model_type"]: set(f["classes"]) for f in supported}
            self.fitting |= {model for f in supported for model in f["models"]}
            # The planner's reason for each model it cannot place on trn2 (too large, or too
            # large for one core of a family that cannot be split).
            entries = run_json(canrun, "catalog", catalog, task)
            self.plan_reasons.update({e["id"]: e["plan"]["reason"] for e in entries
                                      if (e.get("plan") or {}).get("reason")})
            self.supported |= {e["id"] for e in entries if e.get("family_supported")}

    def supports(self, record):
        if record["task"] in ENCODER_TASKS:
            return record["id"] in self.supported
        classes = self.classes.get(record["task"], {})
        named = set(record.get("architectures") or [])
        return record["model_type"] in classes or any(named & c for c in classes.values())


def run_json(canrun, command, catalog, task):
    result = subprocess.run([canrun, command, "--json", "--catalog", str(catalog), "--task", task,
                             "--profile", "trn2"], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"{canrun} {command} --json --task {task} failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def exclusion(record, registry):
    """None when the selection rule holds, else the reason of the first criterion it fails."""
    if record["task"] in ENCODER_TASKS and not record["model_type"]:
        return "model_type unknown: the snapshot found no config for it"
    if record["task"] not in CHECKED_TASKS or not registry.supports(record):
        return "not prioritized yet"
    if record["task"] in ENCODER_TASKS:
        config = record.get("config") or {}
        missing = [field for field in ENCODER_SIZE_FIELDS if config.get(field) is None]
        if missing:
            return "config incomplete: the snapshot has no " + ", ".join(missing)
        st_modules = (record.get("sentence_transformers") or {}).get("modules") or []
        unmade = [m for m in st_modules if m not in ("Transformer", "Pooling", "Normalize")]
        if unmade:
            return (f"sentence-transformers module {unmade[0]}: the snapshot has no shapes for its weights, "
                    "so no synthetic checkpoint can be made")
        if record["task"] == "text-ranking" and not any(
                name.endswith("ForSequenceClassification") for name in record.get("architectures") or []):
            return "no classification head: its architectures name no *ForSequenceClassification class"
    if record["id"] not in registry.fitting:
        return registry.plan_reasons.get(record["id"], "needs more than 16 cores")
    return None


def catalog_row(record, rank):
    corrections = []
    model_type = record["model_type"]
    if model_type is None and record["id"] in MODEL_TYPE_CORRECTIONS:
        model_type = MODEL_TYPE_CORRECTIONS[record["id"]]
        corrections.append({"field": "model_type", "was": None, "now": model_type,
                            "source": CORRECTION_SOURCE})
    if record["task"] not in TASKS or (not model_type and record["task"] not in ENCODER_TASKS):
        sys.exit(f"{record['id']}: unexpected task {record['task']!r} or model_type {model_type!r}")
    row = dict(record, model_type=model_type)
    row.update(popularity=popularity(record, rank), selected=False, exclusion="not decided yet",
               corrections=corrections)
    return row


def read_records(path):
    """The snapshot's records; a file that cannot be read, or a line that is not a JSON object, ends
    the script with one line naming the file (and line)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        sys.exit(f"{path}: cannot read: {error.strerror}")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            sys.exit(f"{path}:{number}: not JSON: {error.msg}")
        if not isinstance(record, dict) or not isinstance(record.get("id"), str) or \
                not {"task", "model_type"} <= record.keys():
            sys.exit(f"{path}:{number}: a record needs an 'id', a 'task' and a 'model_type' (null when unknown)")
        records.append(record)
    return records


def write_rows(rows, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--encoders", type=Path, default=DEFAULT_ENCODERS,
                        help="the encoder models' snapshot (default ../shared/catalog/encoders.jsonl)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--canrun", default=os.environ.get("CANRUN_BIN", str(REPO_ROOT / "build" / "canrun")),
                        help="the canrun binary whose registry decides the supported families "
                             "(default $CANRUN_BIN, else build/canrun)")
    args = parser.parse_args()

    records = [record for source in (args.source, args.encoders) for record in read_records(source)]
    ids = [r["id"] for r in records]
    if len(ids) != len(set(ids)):
        sys.exit(f"{args.source}, {args.encoders}: duplicate model ids")
    ranks = downloads_ranks(records)
    rows = [catalog_row(r, ranks.get(r["id"])) for r in records]
    with tempfile.TemporaryDirectory() as scratch:
        undecided = Path(scratch) / "catalog.jsonl"
        write_rows(rows, undecided)
        registry = Registry(args.canrun, undecided)
    for row in rows:
        reason = exclusion(row, registry)
        row.update(selected=reason is None, exclusion=reason)
    write_rows(rows, args.out)
    for task in TASKS:
        in_task = [r for r in rows if r["task"] == task]
        print(f"{task}: {sum(r['selected'] for r in in_task)} selected of {len(in_task)}")


if __name__ == "__main__":
    main()
