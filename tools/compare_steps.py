#!/usr/bin/env python3
"""Compare canrun's per-step activation dump with transformers' and name the first step that differs.

    python tools/compare_steps.py CANRUN_DIR TRANSFORMERS_DIR [--atol 1e-4] [--rtol 1e-4] [--json]

CANRUN_DIR is what `canrun generate --dump` writes (format canrun-dump-1), TRANSFORMERS_DIR what
tools/dump_transformers_steps.py writes (transformers-dump-1). Needs numpy only, so CI runs it.

canrun's entries are walked in index order. An entry with a module is compared with the
transformers tensor of the same (module, capture), cut as the entry says: rows "last" keeps that
tensor's last row, columns [begin, end) its columns begin..end-1 (a fused projection such as
phi3's qkv_proj). A step agrees when max|a - b| <= atol + rtol * max|b|, b being transformers'
values; different shapes are a difference. Entries without a module (no transformers
counterpart, e.g. rotary) are counted, not compared.

Exit status: 0 when every compared step agrees, 1 when one differs, 2 for bad input: a missing
folder, manifest or .npy file, a wrong format field, prompt ids that are not the same, or a
canrun step whose tensor the transformers dump lacks.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

CANRUN_FORMAT = "canrun-dump-1"
TRANSFORMERS_FORMAT = "transformers-dump-1"
CAPTURES = ("output", "input")


class InputError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


def read_manifest(folder, expected_format):
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder")
    path = folder / "manifest.json"
    try:
        manifest = json.loads(path.read_text())
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{path}: not a JSON object")
    if manifest.get("format") != expected_format:
        raise InputError(f"{path}: field format is {manifest.get('format')!r}, expected {expected_format!r}")
    for field in ("prompt_ids", "entries"):
        if not isinstance(manifest.get(field), list):
            raise InputError(f"{path}: field {field} must be a list")
    for position, entry in enumerate(manifest["entries"]):
        if not isinstance(entry, dict):
            raise InputError(f"{path}: entries[{position}] is not an object")
    return manifest


def load_array(folder, entry, where):
    """The entry's .npy as a 2-D float64 array, checked against the shape the manifest gives."""
    file = entry.get("file")
    if not isinstance(file, str):
        raise InputError(f"{folder / 'manifest.json'}: {where}: field file must be a string")
    path = folder / file
    try:
        array = np.load(path, allow_pickle=False)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        raise InputError(f"{path}: not a .npy array: {e}") from None
    if list(array.shape) != entry.get("shape"):
        raise InputError(f"{path}: holds shape {list(array.shape)} but {where} says {entry.get('shape')}")
    if array.ndim != 2:
        raise InputError(f"{path}: shape {list(array.shape)} is not [rows, width]")
    return array.astype(np.float64)


def check_canrun_entry(entry, where):
    """The entry's module, capture, rows and columns fields, or an InputError naming the bad one."""
    module, capture, rows, columns = (entry.get(k) for k in ("module", "capture", "rows", "columns"))
    if module is not None and not isinstance(module, str):
        raise InputError(f"{where}: field module must be a string or null, got {module!r}")
    if module is not None and capture not in CAPTURES:
        raise InputError(f"{where}: field capture must be one of {', '.join(CAPTURES)}, got {capture!r}")
    if type(entry.get("index")) is not int:
        raise InputError(f"{where}: field index must be an integer, got {entry.get('index')!r}")
    if rows not in ("all", "last"):
        raise InputError(f"{where}: field rows must be \"all\" or \"last\", got {rows!r}")
    if columns is not None and not (isinstance(columns, list) and len(columns) == 2
                                    and all(type(c) is int for c in columns) and 0 <= columns[0] <= columns[1]):
        raise InputError(f"{where}: field columns must be null or [begin, end) with 0 <= begin <= end, got {columns!r}")


def cut(reference, rows, columns):
    """The part of transformers' [seq, width] tensor that canrun's entry holds, or None when out of range."""
    if rows == "last":
        reference = reference[-1:]
    if columns is not None:
        begin, end = columns
        if end > reference.shape[1]:
            return None
        reference = reference[:, begin:end]
    return reference


def shape_mismatch(values, target, part, entry):
    if part is None:
        return f"columns {entry['columns']} reach past transformers' width {target.shape[1]}"
    reason = f"canrun shape {list(values.shape)} != transformers shape {list(part.shape)}"
    if part.shape != target.shape:
        reason += f" (its {list(target.shape)} cut to rows {entry['rows']}, columns {entry['columns']})"
    return reason


def compare_step(values, reference, atol, rtol):
    """(max abs diff, tolerance, agrees); NaN anywhere in either side never agrees."""
    if values.size == 0:
        return 0.0, atol, True
    max_diff = float(np.max(np.abs(values - reference)))
    tolerance = atol + rtol * float(np.max(np.abs(reference)))
    return max_diff, tolerance, bool(max_diff <= tolerance)


def absence_reason(reference, module, capture):
    """Why the transformers dump has no tensor for (module, capture), from its missing and skipped lists."""
    if module in reference.get("missing", []):
        return "the model has no such module"
    for skipped in reference.get("skipped", []):
        if (skipped.get("module"), skipped.get("capture")) == (module, capture):
            return f"not dumped: {skipped.get('reason')}"
    return "the transformers dump has no such tensor"


def compare(canrun_dir, transformers_dir, atol, rtol):
    """Every canrun step against transformers; the result as a dict (see --json)."""
    canrun = read_manifest(canrun_dir, CANRUN_FORMAT)
    reference = read_manifest(transformers_dir, TRANSFORMERS_FORMAT)
    if canrun["prompt_ids"] != reference["prompt_ids"]:
        raise InputError(f"prompt ids differ: {canrun_dir / 'manifest.json'} has {canrun['prompt_ids']}, "
                         f"{transformers_dir / 'manifest.json'} has {reference['prompt_ids']}")
    by_module = {}
    for position, entry in enumerate(reference["entries"]):
        key = (entry.get("module"), entry.get("capture"))
        if key in by_module:
            raise InputError(f"{transformers_dir / 'manifest.json'}: entries[{position}]: "
                             f"{key[0]} {key[1]} is listed twice")
        by_module[key] = entry

    checked = []
    for position, entry in enumerate(canrun["entries"]):
        where = f"{canrun_dir / 'manifest.json'}: entries[{position}] (step {entry.get('step')!r})"
        check_canrun_entry(entry, where)
        checked.append((entry, where))
    steps, no_counterpart = [], []
    for entry, where in sorted(checked, key=lambda pair: pair[0]["index"]):
        if entry["module"] is None:
            no_counterpart.append(entry.get("step"))
            continue
        step = {"index": entry["index"], "step": entry.get("step"), "module": entry["module"],
                "capture": entry["capture"], "rows": entry["rows"], "columns": entry["columns"]}
        steps.append(step)
        values = load_array(canrun_dir, entry, where)
        match = by_module.get((entry["module"], entry["capture"]))
        if match is None:
            step["status"] = "missing"
            step["reason"] = absence_reason(reference, entry["module"], entry["capture"])
            continue
        target = load_array(transformers_dir, match, f"the entry of {entry['module']} {entry['capture']}")
        part = cut(target, entry["rows"], entry["columns"])
        step["canrun_shape"] = list(values.shape)
        step["transformers_shape"] = list(target.shape)
        if part is None or part.shape != values.shape:
            step["status"] = "FAIL"
            step["reason"] = shape_mismatch(values, target, part, entry)
            continue
        max_diff, tolerance, agrees = compare_step(values, part, atol, rtol)
        step.update(max_abs_diff=max_diff, tolerance=tolerance, status="ok" if agrees else "FAIL")
        if not agrees:
            step["reason"] = f"max abs diff {max_diff:.1e} > tolerance {tolerance:.1e}"

    failed = [s for s in steps if s["status"] == "FAIL"]
    missing = [s for s in steps if s["status"] == "missing"]
    return {"canrun": str(canrun_dir), "transformers": str(transformers_dir), "atol": atol, "rtol": rtol,
            "prompt_ids": canrun["prompt_ids"], "steps": steps, "no_counterpart": no_counterpart,
            "compared": len(steps) - len(missing), "failed": len(failed), "missing": len(missing),
            "first_difference": failed[0] if failed else None,
            "exit_status": 1 if failed else 2 if missing else 0}


def describe(step):
    return f"step {step['step']} ({step['module']} {step['capture']})"


def summary(result):
    first = result["first_difference"]
    if first is not None:
        return f"first difference: {describe(first)}, {first['reason']}"
    if result["missing"]:
        missing = next(s for s in result["steps"] if s["status"] == "missing")
        steps_have = "step has" if result["missing"] == 1 else "steps have"
        return (f"{result['missing']} canrun {steps_have} no transformers tensor, the first {describe(missing)}: "
                f"{missing['reason']}; the other {result['compared']} compared steps agree")
    others = len(result["no_counterpart"])
    return (f"all {result['compared']} compared steps agree "
            f"({others} {'step' if others == 1 else 'steps'} had no transformers counterpart)")


def table(steps):
    """One line per compared step, columns aligned."""
    rows = [(str(s["index"]), s["step"] or "", f"{s['module']} {s['capture']}",
             f"{s['max_abs_diff']:.2e}" if "max_abs_diff" in s else "-",
             s["status"] + (f": {s['reason']}" if s["status"] != "ok" else "")) for s in steps]
    header = ("index", "step", "module", "max abs diff", "result")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join([row[0].rjust(widths[0]), row[1].ljust(widths[1]), row[2].ljust(widths[2]),
                                row[3].rjust(widths[3]), row[4]]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("canrun_dir", type=Path, metavar="CANRUN_DIR")
    parser.add_argument("transformers_dir", type=Path, metavar="TRANSFORMERS_DIR")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    try:
        result = compare(args.canrun_dir, args.transformers_dir, args.atol, args.rtol)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(table(result["steps"]))
        print(summary(result))
    return result["exit_status"]


if __name__ == "__main__":
    sys.exit(main())
