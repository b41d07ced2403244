#!/usr/bin/env python3
"""Writes a dataset file of made-up support-lab rows, for the Space's tests and load benchmark.

The rows follow src/lab/dataset.h's schema exactly (types, nullability, one row per model) and
look like real ones (statuses, errors, software stack, reproduce script), but nothing was run:
every row's `host` is "synthetic-results" and its error/text say so. Models come from the
catalog; past its length, ids get a "-variant-N" suffix so every model_id stays unique.

    python3 tools/make_synthetic_results.py --out /tmp/results --rows 10000
    python3 tools/make_synthetic_results.py --out /tmp/results --compiler torch-2.5.1 --library transformers-4.46.0
"""
import argparse
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
# The made-up rows call only these families supported, a fixed split (not the registry, which
# grows) so that the tests always see both outcomes; nothing here was run either way.
SUPPORTED = {"llama", "mistral", "qwen2", "qwen3"}
HOST = "synthetic-results"
PROMPT = "The capital of France is"

STACK_TYPE = pa.list_(pa.struct([pa.field("component", pa.string(), nullable=False),
                                 pa.field("version", pa.string(), nullable=False)]))
SCHEMA = pa.schema([
    pa.field("model_id", pa.string(), nullable=False),
    pa.field("revision", pa.string()),
    pa.field("task", pa.string(), nullable=False),
    pa.field("architecture", pa.string(), nullable=False),
    pa.field("parameter_count", pa.int64()),
    pa.field("weights", pa.string(), nullable=False),
    pa.field("result", pa.string(), nullable=False),
    pa.field("error_type", pa.string()),
    pa.field("error_message", pa.string()),
    pa.field("cores", pa.int32()),
    pa.field("tp_degree", pa.int32()),
    pa.field("ep_degree", pa.int32()),
    pa.field("wall_time_s", pa.float64(), nullable=False),
    pa.field("compile_time_s", pa.float64()),
    pa.field("recompilations", pa.int32()),
    pa.field("plan_cache_hit", pa.bool_()),
    pa.field("peak_activation_bytes", pa.int64()),
    pa.field("graph_breaks", pa.int32()),
    pa.field("eager_fallback", pa.bool_()),
    pa.field("load_time_s", pa.float64()),
    pa.field("peak_device_memory_bytes", pa.int64()),
    pa.field("peak_host_memory_bytes", pa.int64()),
    pa.field("prompt", pa.string(), nullable=False),
    pa.field("generated_text", pa.string()),
    pa.field("generated_token_ids", pa.list_(pa.int32())),
    pa.field("reference_token_ids", pa.list_(pa.int32())),
    pa.field("matching_prefix_length", pa.int32()),
    pa.field("verification", pa.string()),
    pa.field("judge_score", pa.float64()),
    pa.field("judge", pa.string()),
    pa.field("software_stack", STACK_TYPE, nullable=False),
    pa.field("reproduce_script", pa.string(), nullable=False),
    pa.field("timestamp", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("host", pa.string(), nullable=False),
    pa.field("compiler_version", pa.string(), nullable=False),
    pa.field("library_version", pa.string(), nullable=False),
])

# Outcomes of a runnable model and how often they come up.
OUTCOMES = [("PASS", 70), ("PASS_TOP5", 5), ("FAIL_RUNTIME", 5), ("FAIL_MISMATCH", 3), ("TIMEOUT", 4), ("OOM", 5),
            ("NOT_TESTED", 8)]


def stack_for(compiler, library):
    if compiler.startswith("canrun-"):
        return [{"component": "canrun", "version": compiler.removeprefix("canrun-") + " (synthetic)"},
                {"component": "backend", "version": library.split("-", 1)[0] + " (compiled), verified against ref"},
                {"component": "isa", "version": library.split("-", 1)[-1]},
                {"component": "g++", "version": "12.2.0"},
                {"component": "os", "version": "Debian GNU/Linux 12 (bookworm)"}]
    return [{"component": part.rsplit("-", 1)[0], "version": part.rsplit("-", 1)[-1]} for part in (compiler, library)] + \
           [{"component": "python", "version": "3.11.2"}]


def make_row(entry, model_id, rng, compiler, library, when):
    params = int(entry["params_b"] * 1e9) if entry.get("params_b") else None
    row = {name: None for name in SCHEMA.names}
    row.update(model_id=model_id, task=entry["task"], architecture=entry["model_type"], parameter_count=params,
               weights="synthetic", prompt=PROMPT, software_stack=stack_for(compiler, library), timestamp=when,
               host=HOST, compiler_version=compiler, library_version=library, wall_time_s=0.0)
    if entry["model_type"] not in SUPPORTED:
        row.update(result="UNSUPPORTED_ARCHITECTURE", error_type="unsupported_architecture",
                   error_message=f"architecture not supported: {entry['model_type']}")
    elif not entry["selected"]:
        row.update(result="EXCLUDED", error_type="excluded", error_message=entry["exclusion"])
    else:
        result = rng.choices([o for o, _ in OUTCOMES], [w for _, w in OUTCOMES])[0]
        row["result"] = result
        size = params or 1_000_000_000
        if result == "NOT_TESTED":
            row.update(error_type="needs_sharding", error_message="needs 2 cores on profile local (synthetic row)")
        else:
            row.update(cores=1, tp_degree=1, ep_degree=1, load_time_s=round(rng.uniform(0.2, 8.0), 3),
                       compile_time_s=round(rng.uniform(0.1, 30.0), 3), recompilations=0,
                       plan_cache_hit=rng.random() < 0.3, peak_activation_bytes=int(size * rng.uniform(0.01, 0.05)),
                       peak_host_memory_bytes=int(size * 4 * rng.uniform(1.05, 1.3)),
                       wall_time_s=round(rng.uniform(1.0, 240.0), 3))
            if result.startswith("PASS") or result == "FAIL_MISMATCH":
                ids = [rng.randrange(1000, 30000) for _ in range(32)]
                reference = ids if result == "PASS" else ids[:20] + [i + 1 for i in ids[20:]]
                row.update(generated_text=" Paris. (synthetic row: no text was generated)", generated_token_ids=ids,
                           reference_token_ids=reference, matching_prefix_length=32 if result == "PASS" else 20,
                           verification="exact" if result == "PASS" else "top-5")
            if result == "FAIL_MISMATCH":
                row.update(error_type="mismatch", error_message="token 20 differs and is not in the reference's top-5")
            elif result == "FAIL_RUNTIME":
                row.update(error_type="signal", error_message="the check process died of SIGSEGV (synthetic row)")
            elif result == "TIMEOUT":
                row.update(error_type="timeout", error_message="killed after 600 s (synthetic row)", wall_time_s=600.0)
            elif result == "OOM":
                row.update(error_type="oom", error_message="out of memory under the 16 GiB limit (synthetic row)")
    row["reproduce_script"] = ("#!/usr/bin/env bash\n# Synthetic row made by tools/make_synthetic_results.py: "
                               f"nothing to reproduce for {model_id}.\nexit 1\n")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="dataset folder")
    parser.add_argument("--rows", type=int, default=0, help="number of rows (default: one per catalog model)")
    parser.add_argument("--catalog", type=Path, default=REPO / "data" / "catalog.jsonl")
    parser.add_argument("--compiler", default="canrun-0.1.0")
    parser.add_argument("--library", default="cpu-x86_64-avx2-fma")
    parser.add_argument("--days-ago", type=float, default=1.0, help="age of the newest row (the newest pair is shown first)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    entries = [json.loads(line) for line in args.catalog.read_text().splitlines() if line.strip()]
    count = args.rows or len(entries)
    rng = random.Random(args.seed)
    # Microseconds kept, as canrun's rows keep them: with --days-ago 0 these rows must be newer
    # than any row written a moment before, even within the same second.
    newest = datetime.now(timezone.utc) - timedelta(days=args.days_ago)
    rows = []
    for index in range(count):
        entry = entries[index % len(entries)]
        model_id = entry["id"] if index < len(entries) else f"{entry['id']}-variant-{index // len(entries)}"
        rows.append(make_row(entry, model_id, rng, args.compiler, args.library, newest - timedelta(seconds=index)))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.compiler}__{args.library}.parquet"
    temporary = path.with_name("." + path.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), temporary, compression="zstd")
    temporary.replace(path)  # atomic, like canrun's own writer: the server never sees half a file
    print(f"{path}: {count} synthetic rows")


if __name__ == "__main__":
    main()
