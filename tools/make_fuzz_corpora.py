"""Writes fuzz/corpus/<target>/: the seed inputs of each fuzz target, made from the test
fixtures and goldens, kept small (each seed at most 16 KiB). Runs canrun itself for the
inputs only canrun writes: a dataset Parquet file, a plan-cache manifest and a plan index.

From the repository root, after building canrun:

  python3 tools/make_fuzz_corpora.py --canrun build/canrun
"""
import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT / "fuzz" / "corpus"
MAX_SEED = 16 << 10


ONLY = set()  # --only: the targets to write; empty: all


def write_seeds(target, seeds):
    """Seeds named by their content's hash. (The Parquet file and the plan files canrun writes
    hold timestamps, so theirs change on every run: use --only for the others.)"""
    if ONLY and target not in ONLY:
        return
    folder = CORPUS / target
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    kept = 0
    for seed in seeds:
        if len(seed) > MAX_SEED:
            continue
        (folder / hashlib.sha1(seed).hexdigest()[:16]).write_bytes(seed)
        kept += 1
    print(f"{folder.relative_to(ROOT)}: {kept} seeds")


def safetensors(header, data=b""):
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def small_safetensors(path):
    """The fixture's first tensors with tiny shapes, so every dtype it uses appears in a valid file."""
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    out, offset = {}, 0
    for name, entry in list(header.items())[:4]:
        if name == "__metadata__":
            out[name] = entry
            continue
        bits = {"F32": 32, "BF16": 16, "F16": 16, "U8": 8, "I8": 8, "F8_E4M3": 8, "I32": 32, "I64": 64}.get(entry["dtype"], 8)
        shape = [2] * len(entry["shape"])
        size = (2 ** len(shape)) * bits // 8
        out[name] = {"dtype": entry["dtype"], "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    return safetensors(out, bytes(offset))


def fixture_files(name):
    return sorted((FIXTURES / "models").glob(f"*/{name}"))


def canrun_made(canrun):
    """A dataset file, a plan manifest and a plan index, from one check of a fixture."""
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        env = dict(os.environ, XDG_CACHE_HOME=str(work / "xdg"), HF_HUB_CACHE=str(work / "hub"))
        subprocess.run([canrun, "check", FIXTURES / "models" / "qwen2", "--cache-dir", work / "plans",
                        "--out", work / "results"], check=True, env=env, capture_output=True)
        subprocess.run([canrun, "cache", "push", str(work / "shared"), "--cache-dir", work / "plans"],
                       check=True, env=env, capture_output=True)
        parquet = [p.read_bytes() for p in sorted((work / "results").glob("*.parquet"))]
        manifests = [p.read_bytes() for p in sorted((work / "plans").glob("*/*/manifest.json"))]
        indexes = [p.read_bytes() for p in sorted((work / "shared").glob("*/index.json"))]
    return parquet, manifests, indexes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--canrun", default=str(ROOT / "build" / "canrun"), help="the canrun binary (default build/canrun)")
    parser.add_argument("--only", nargs="+", default=[], metavar="TARGET", help="write only these targets' seeds")
    args = parser.parse_args()
    ONLY.update(args.only)

    write_seeds("safetensors_header", [small_safetensors(p) for p in fixture_files("model.safetensors")[::4]] +
                [safetensors({"__metadata__": {"format": "pt"}}), safetensors({})])
    write_seeds("safetensors_index", [
        json.dumps({"metadata": {"total_size": 8}, "weight_map": {"w": "model-00001-of-00001.safetensors"}}).encode(),
        json.dumps({"weight_map": {"w": "model-00001-of-00001.safetensors", "x": "../model.safetensors"}}).encode(),
    ] + [p.read_bytes() for p in sorted((FIXTURES / "models").glob("*/model.safetensors.index.json"))])
    write_seeds("image_file", [p.read_bytes() for p in sorted((FIXTURES / "images").iterdir())])
    write_seeds("model_config", [p.read_bytes() for p in fixture_files("config.json")])
    write_seeds("generation_config", sorted({p.read_bytes() for p in fixture_files("generation_config.json")}))
    write_seeds("tokenizer_json", [p.read_bytes() for p in sorted((FIXTURES / "tokenizers").glob("*/tokenizer.json"))])
    corpus_lines = [line.encode() for line in (FIXTURES / "tokenizer_corpus.txt").read_text().splitlines() if line]
    write_seeds("tokenizer_text", [bytes([i]) + line for i, line in enumerate(corpus_lines[:36])])
    snippets = json.loads((ROOT / "tests" / "goldens" / "chat_templates" / "snippets.json").read_text())
    write_seeds("chat_template", [s["template"].encode() for s in snippets["snippets"]])
    renders = json.loads((ROOT / "tests" / "goldens" / "chat_templates" / "renders.json").read_text())
    write_seeds("messages_file", [json.dumps(c["messages"], ensure_ascii=False).encode()
                                  for c in renders["conversations"].values()])
    parquet, manifests, indexes = canrun_made(args.canrun) if not ONLY or ONLY & {"dataset_rows", "plan_manifest", "plan_index"} else ([], [], [])
    write_seeds("dataset_rows", parquet)
    write_seeds("plan_manifest", manifests)
    write_seeds("plan_index", indexes)
    write_seeds("http_request", [request.encode() for request in [
        "GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
        "GET /api/rows?view=selected HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n"
        "HEAD /app.js HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
        "POST /api/rows HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: space.example\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET / HTTP/1.0\r\n\r\n",
        "GET /%2e%2e/ HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"]])
    write_seeds("serve_request", [target.encode() for target in [
        "/", "/index.html", "/app.js", "/app.css", "/../README.md", "/%2e%2e/x", "/api/pairs",
        "/api/rows?view=selected&task=text-generation&sort=downloads&limit=50",
        "/api/rows?view=tested&result=PASS&q=org&compiler=canrun-0.1.0&library=ref-x86_64",
        "/api/rows?view=all&sort=wall_time_s&order=desc&offset=2", "/api/model?id=org/a",
        "/api/model?id=org/vlm&compiler=canrun-0.1.0&library=ref-x86_64", "/api/catalog?task=image-text-to-text",
        "/api/rows?limit=ten", "/api/rows?view=tested&view=selected", "/api/rows?q=%ff%fe"]])


if __name__ == "__main__":
    main()
