"""Driver of bench/compare.sh: the same model through canrun, llama.cpp (llama-cpp-python) and
transformers (eager and torch.compile) at the same precision, thread count, and prompt/output
lengths; a table of ratios canrun / other, absolute tokens/s, and decode as a fraction of the
memory-bandwidth limit; a JSON file with every measurement and the conditions.

Standard library only: each engine runs in a subprocess (bench/compare_worker.py) in the Python
environment that has it, so a failing engine is a row in the table, not a crash of the script.
Settings come from the environment (see bench/compare.sh).
"""
import datetime
import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

MODELS = {
    # name: (real folder, or catalog id for a synthetic checkpoint at its real config)
    "smollm2": {"dir": "models/SmolLM2-135M-Instruct", "label": "SmolLM2-135M-Instruct (real weights)"},
    "qwen2.5-0.5b": {"catalog_id": "Qwen/Qwen2.5-0.5B-Instruct",
                     "label": "Qwen2.5-0.5B-Instruct (synthetic weights, real config)"},
    "qwen2.5-1.5b": {"catalog_id": "Qwen/Qwen2.5-1.5B-Instruct",
                     "label": "Qwen2.5-1.5B-Instruct (synthetic weights, real config)"},
}
ENGINES = ["canrun", "llama.cpp", "transformers-eager", "transformers-compile"]
BYTES_PER_WEIGHT = {"f32": 4, "bf16": 2}


def env(name, default):
    value = os.environ.get(name, "")
    return value if value else default


def log(msg):
    print(f"[compare {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def tail(text, n=400):
    text = (text or "").strip()
    return text if len(text) <= n else "..." + text[-n:]


def run(cmd, timeout, extra_env=None, cwd=ROOT):
    """Runs cmd; returns (ok, stdout, stderr or reason, seconds)."""
    e = dict(os.environ)
    e.update(extra_env or {})
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return False, exc.stdout or "", f"timed out after {timeout} s", time.perf_counter() - t0
    except OSError as exc:
        return False, "", str(exc), time.perf_counter() - t0
    ok = p.returncode == 0
    return ok, p.stdout, p.stderr if ok else f"exit {p.returncode}: {tail(p.stderr or p.stdout)}", time.perf_counter() - t0


def last_json(stdout):
    """The whole stdout as JSON (canrun bench --json), else its last line that is a JSON object."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        pass
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            return json.loads(line)
    raise ValueError(f"no JSON in the output: {tail(stdout)}")


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def cpu_flags():
    """The vector-instruction flags of /proc/cpuinfo: what each engine's kernels could use here."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                return [f for f in flags if f.startswith(("avx", "amx", "fma", "f16c", "sse4"))]
    except OSError:
        pass
    return []


def mem_total_bytes():
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def bandwidth(threads, cache):
    """Compiles bench/stream_bw.c and runs it on `threads` threads."""
    exe = cache / "stream_bw"
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        return {"error": "no C compiler"}
    ok, out, err, _ = run([cc, "-O2", "-fopenmp", str(BENCH / "stream_bw.c"), "-o", str(exe)], 120)
    if not ok:
        return {"error": f"compile: {err}"}
    result = run_stream_bw(exe, threads)
    if "error" in result:
        return result
    result["method"] = ("bench/stream_bw.c: STREAM-like copy and triad, 3 x 2^25 doubles (768 MiB), "
                        "OpenMP, best of 5; triad taken as the limit")
    result["compiler"] = cc
    return result


def triad_now(threads, cache):
    """The triad bandwidth in GB/s right now (stream_bw as bandwidth() compiled it), or None."""
    exe = cache / "stream_bw"
    if not exe.exists():
        return None
    return run_stream_bw(exe, threads).get("triad_gb_s")


def run_stream_bw(exe, threads):
    """Runs the compiled stream_bw on `threads` threads: its JSON result, or {"error": why}."""
    ok, out, err, _ = run([str(exe)], 300, {"OMP_NUM_THREADS": str(threads)})
    if not ok:
        return {"error": err}
    try:
        return last_json(out)
    except ValueError as e:
        return {"error": str(e)}


# Triads before and after an engine's run further apart than this: the machine's memory changed
# speed during the run (a neighbour on a shared host), and its decode % of the limit is marked.
TRIAD_MOVED = 0.15


def safetensors_tensors(model_dir):
    """{name: (dtype, numel)} from the safetensors headers (single file or sharded)."""
    d = Path(model_dir)
    files = [d / "model.safetensors"] if (d / "model.safetensors").exists() else sorted(d.glob("*.safetensors"))
    tensors = {}
    for f in files:
        with open(f, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(n))
        for name, info in header.items():
            if name == "__metadata__":
                continue
            numel = 1
            for s in info["shape"]:
                numel *= s
            tensors[name] = (info["dtype"], numel)
    return tensors


def weights_read_per_token(model_dir, precision):
    """Parameters a decode step reads: every weight once, except that the embedding table gives
    one row unless it is also the (tied) output matrix. The KV cache is left out (small at these
    lengths: at most 640 positions)."""
    tensors = safetensors_tensors(model_dir)
    total = sum(numel for _, numel in tensors.values())
    embed = next((numel for name, (_, numel) in tensors.items() if name.endswith("embed_tokens.weight")), 0)
    tied = not any(name.endswith("lm_head.weight") for name in tensors)
    params_read = total if tied else total - embed
    return {
        "parameters": total,
        "parameters_read_per_token": params_read,
        "tied_embeddings": tied,
        "bytes_per_weight": BYTES_PER_WEIGHT[precision],
        "bytes_read_per_token": params_read * BYTES_PER_WEIGHT[precision],
        "checkpoint_dtypes": sorted({dtype for dtype, _ in tensors.values()}),
    }


def prepare_model(name, spec, cfg):
    """Returns (canrun's folder, the converter's and transformers' folder) for a model."""
    if "dir" in spec:
        d = ROOT / spec["dir"]
        if not (d / "model.safetensors").exists() and name == "smollm2":
            log("fetching SmolLM2 (tools/fetch_smollm2.sh)")
            subprocess.run(["bash", "tools/fetch_smollm2.sh"], cwd=ROOT, check=True)
        return d, d
    # Synthetic: canrun writes config.json + bf16 model.safetensors at the catalog's real config
    # into $XDG_CACHE_HOME/canrun/synthetic/<id with / as ->; `canrun check --synthetic` makes it
    # (and runs its short check, which we ignore here).
    xdg = cfg["cache"] / "xdg"
    folder = xdg / "canrun" / "synthetic" / spec["catalog_id"].replace("/", "-")
    if not (folder / "model.safetensors").exists():
        log(f"making synthetic checkpoint of {spec['catalog_id']} with canrun check --synthetic")
        ok, out, err, secs = run([str(cfg["canrun"]), "check", spec["catalog_id"], "--synthetic", "--no-record"], 3600,
                                 {"XDG_CACHE_HOME": str(xdg)})
        if not (folder / "model.safetensors").exists():
            raise RuntimeError(f"canrun check --synthetic made no checkpoint at {folder}: {err or tail(out)}")
    # The GGUF converter needs a tokenizer and synthetic folders have none. The weights are random
    # and no engine here tokenizes text (prompts are token ids), so the tokenizer only has to let
    # the conversion run. A borrowed BPE tokenizer.json does not: for Qwen2 the converter checks a
    # hash of how it splits a fixed text against a list of known pre-tokenizers, and SmolLM2's
    # rebuilt tokenizer.json is not on it. So a tiny SentencePiece model (BPE, 400 pieces, byte
    # fallback) is trained on this README; the converter pads its vocabulary to the config's
    # vocab_size with [PADn] tokens.
    conv = cfg["cache"] / "hf" / name
    conv.mkdir(parents=True, exist_ok=True)
    if not (conv / "tokenizer.model").exists():
        code = ("import sentencepiece as spm, sys; spm.SentencePieceTrainer.train(input=sys.argv[1], "
                "model_prefix=sys.argv[2], vocab_size=400, model_type='bpe', character_coverage=1.0, "
                "byte_fallback=True, minloglevel=2)")
        ok, out, err, _ = run([cfg["torch_py"], "-c", code, str(ROOT / "README.md"), str(conv / "tokenizer")], 600,
                              {"PYTHONPATH": os.environ.get("CONVERT_DEPS", "")})
        if not ok:
            raise RuntimeError(f"training the stand-in SentencePiece tokenizer failed: {err}")
    link = conv / "model.safetensors"
    if not link.exists():
        link.symlink_to(folder / "model.safetensors")
    # The converter picks its model class from config.json's "architectures", which canrun's
    # synthetic config leaves out: take it from the catalog entry.
    # Its null fields (e.g. head_dim) mean "absent"; transformers reads a null head_dim as a value
    # and fails, so they are dropped. Transformers loads this folder too.
    config = {k: v for k, v in json.loads((folder / "config.json").read_text()).items() if v is not None}
    if "architectures" not in config:
        for line in (ROOT / "data" / "catalog.jsonl").read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("id") == spec["catalog_id"]:
                config["architectures"] = row["architectures"]
    (conv / "config.json").write_text(json.dumps(config, indent=2))
    return folder, conv


def convert_gguf(name, conv_dir, cfg):
    out = cfg["cache"] / "gguf" / f"{name}-{cfg['precision']}.gguf"
    if out.exists():
        return out, None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".gguf.part")
    llama_dir = cfg["llama_src"]
    log(f"converting {conv_dir} to GGUF {cfg['precision']} with llama.cpp's convert_hf_to_gguf.py")
    ok, stdout, err, secs = run(
        [cfg["torch_py"], str(llama_dir / "convert_hf_to_gguf.py"), str(conv_dir), "--outtype", cfg["precision"],
         "--outfile", str(tmp)], 3600, {"PYTHONPATH": os.pathsep.join(p for p in [str(llama_dir / "gguf-py"), os.environ.get("CONVERT_DEPS", "")] if p)})
    if not ok:
        raise RuntimeError(f"convert_hf_to_gguf.py failed: {err}")
    tmp.rename(out)
    return out, secs


def engine_canrun(model_dir, cfg):
    cmd = [str(cfg["canrun"]), "bench", str(model_dir), "--prompt-tokens", str(cfg["prompt"]), "--output-tokens",
           str(cfg["output"]), "--requests", str(cfg["runs"]), "--warmup", str(cfg["warmup"]), "--threads",
           str(cfg["threads"]), "--json"]
    if cfg["canrun_backend"]:
        cmd += ["--backend", cfg["canrun_backend"]]
    ok, out, err, secs = run(cmd, cfg["timeout"], {"OMP_NUM_THREADS": str(cfg["threads"])})
    if not ok:
        return {"ok": False, "error": err, "command": " ".join(cmd), "wall_s": secs}
    j = last_json(out)
    if j.get("failures"):
        return {"ok": False, "error": f"canrun bench failures: {j.get('errors')}", "raw": j, "wall_s": secs}
    return {
        "ok": True,
        "prefill_tokens_per_s": j["prefill_tokens_per_s"],
        "decode_tokens_per_s": j["decode_tokens_per_s"],
        "first_token_s": j["first_token_s"].get("p50") if isinstance(j["first_token_s"], dict) else j["first_token_s"],
        "aggregation": f"canrun bench over {cfg['runs']} measured requests (tokens / summed time; equal lengths)",
        "precision": f"weights {j.get('weights_dtype')} computed in {j.get('compute_dtype')}, backend {j.get('backend')}",
        "isa": (j.get("software_stack") or {}).get("isa"),
        "versions": j.get("software_stack"),
        "peak_rss_bytes": j.get("peak_rss_bytes"),
        "command": " ".join(cmd),
        "wall_s": secs,
        "raw": j,
    }


def engine_worker(kind, model, cfg, py, mode=None):
    cmd = [py, str(BENCH / "compare_worker.py"), kind, str(model), "--threads", str(cfg["threads"]),
           "--prompt-tokens", str(cfg["prompt"]), "--output-tokens", str(cfg["output"]), "--runs", str(cfg["runs"]),
           "--warmup", str(cfg["warmup"]), "--precision", cfg["precision"]]
    if mode:
        cmd += ["--mode", mode]
    ok, out, err, secs = run(cmd, cfg["timeout"], {"OMP_NUM_THREADS": str(cfg["threads"])})
    if not ok:
        return {"ok": False, "error": err, "command": " ".join(cmd), "wall_s": secs}
    j = last_json(out)
    j.update({"ok": True, "aggregation": f"median of {cfg['runs']} runs after {cfg['warmup']} warm-up",
              "command": " ".join(cmd), "wall_s": secs})
    versions = j.get("versions") or {}
    if kind == "llama":
        j["precision"] = f"GGUF {cfg['precision'].upper()} (convert_hf_to_gguf.py --outtype {cfg['precision']})"
        j["isa"] = versions.get("system_info")
    else:
        j["precision"] = f"{j['extra'].get('dtype')}, {mode}"
        j["isa"] = versions.get("cpu_capability")
    return j


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def main():
    threads = int(env("THREADS", str(os.cpu_count() or 1)))
    cache = Path(env("COMPARE_CACHE", str(BENCH / ".cache"))).resolve()
    cfg = {
        "threads": threads,
        "prompt": int(env("PROMPT_TOKENS", "512")),
        "output": int(env("OUTPUT_TOKENS", "128")),
        "runs": int(env("RUNS", "3")),
        "warmup": int(env("WARMUP", "1")),
        "precision": env("PRECISION", "f32"),
        "canrun_backend": env("CANRUN_BACKEND", "cpu"),
        "timeout": int(env("ENGINE_TIMEOUT_S", "3600")),
        "cache": cache,
        "canrun": Path(env("CANRUN", str(ROOT / "build" / "canrun"))),
        "torch_py": env("TORCH_PY", sys.executable),
        "llama_py": env("LLAMA_PY", sys.executable),
        "llama_src": Path(os.environ["LLAMA_SRC"]),
    }
    if cfg["precision"] not in BYTES_PER_WEIGHT:
        sys.exit(f"PRECISION must be one of {sorted(BYTES_PER_WEIGHT)}")
    models = [m.strip() for m in env("MODELS", ",".join(MODELS)).split(",") if m.strip()]
    engines = [e.strip() for e in env("ENGINES", ",".join(ENGINES)).split(",") if e.strip()]
    for m in models:
        if m not in MODELS:
            sys.exit(f"unknown model {m!r} in MODELS (known: {', '.join(MODELS)})")
    for e in engines:
        if e not in ENGINES:
            sys.exit(f"unknown engine {e!r} in ENGINES (known: {', '.join(ENGINES)})")
    started = time.time()
    out_path = Path(env("COMPARE_OUT", str(BENCH / "results" / f"compare-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json")))

    log(f"measuring memory bandwidth on {threads} threads")
    bw = bandwidth(threads, cache)
    bw_gb_s = bw.get("triad_gb_s")
    report = {
        "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "conditions": {
            "cpu": cpu_model(), "cpu_flags": cpu_flags(), "cores": os.cpu_count(), "mem_total_bytes": mem_total_bytes(),
            "kernel": platform.release(), "threads": threads, "prompt_tokens": cfg["prompt"],
            "output_tokens": cfg["output"], "runs": cfg["runs"], "warmup": cfg["warmup"],
            "precision": cfg["precision"], "canrun_backend": cfg["canrun_backend"],
            "prompts": "random token ids (no text), the same lengths for every engine; greedy, no eos stop",
            "decode_tokens_per_s": "tokens after the first over the time after the first token",
        },
        "bandwidth": bw,
        "models": {},
    }
    for name in models:
        spec = MODELS[name]
        entry = {"label": spec["label"], "engines": {}}
        report["models"][name] = entry
        try:
            model_dir, conv_dir = prepare_model(name, spec, cfg)
            entry["model_dir"] = str(model_dir)
            entry["weights"] = weights_read_per_token(model_dir, cfg["precision"])
        except Exception as exc:
            entry["error"] = f"model preparation failed: {exc}"
            log(entry["error"])
            continue
        if bw_gb_s:
            entry["decode_limit_tokens_per_s"] = bw_gb_s * 1e9 / entry["weights"]["bytes_read_per_token"]
        for engine in engines:
            log(f"{name}: {engine}")
            load_before = os.getloadavg()
            triad_before = triad_now(threads, cache)
            try:
                if engine == "canrun":
                    r = engine_canrun(model_dir, cfg)
                elif engine == "llama.cpp":
                    gguf, conv_s = convert_gguf(name, conv_dir, cfg)
                    r = engine_worker("llama", gguf, cfg, cfg["llama_py"])
                    r["gguf"] = str(gguf)
                    if conv_s is not None:
                        r["convert_s"] = conv_s
                elif engine == "transformers-eager":
                    r = engine_worker("hf", conv_dir, cfg, cfg["torch_py"], "eager")
                else:
                    r = engine_worker("hf", conv_dir, cfg, cfg["torch_py"], "compile")
                    if not r["ok"]:
                        r["error"] = "torch.compile failed: " + r["error"]
            except Exception as exc:
                r = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            # The machine may be shared: the load average around each engine says how quiet it was,
            # and the triads around it the memory speed its decode had.
            r["loadavg_1min_before_after"] = [load_before[0], os.getloadavg()[0]]
            r["triad_gb_s_before_after"] = [triad_before, triad_now(threads, cache)]
            if None not in r["triad_gb_s_before_after"]:
                r["decode_limit_tokens_per_s"] = (sum(r["triad_gb_s_before_after"]) / 2 * 1e9
                                                  / entry["weights"]["bytes_read_per_token"])
            entry["engines"][engine] = r
            if r["ok"]:
                log(f"{name}: {engine}: prefill {r['prefill_tokens_per_s']:.1f} tok/s, decode "
                    f"{r['decode_tokens_per_s']:.2f} tok/s ({r['wall_s']:.0f} s)")
            else:
                log(f"{name}: {engine} FAILED: {r['error']}")
            out_path.parent.mkdir(parents=True, exist_ok=True)
            out_path.write_text(json.dumps(report, indent=2))  # what is measured so far survives a stop
    report["wall_s"] = time.time() - started
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=2))
    print_table(report, cfg)
    print(f"\nJSON: {out_path}")


def print_table(report, cfg):
    c = report["conditions"]
    bw = report["bandwidth"]
    print(f"\ncanrun vs llama.cpp vs transformers on {c['cpu']} ({c['cores']} cores, "
          f"{(c['mem_total_bytes'] or 0) / 2**30:.0f} GiB), {c['threads']} threads, precision {c['precision']}")
    print(f"prefill: {c['prompt_tokens']}-token prompt; decode: {c['output_tokens']} tokens "
          f"(tokens/s after the first); prompts are random token ids; {c['runs']} measured runs after "
          f"{c['warmup']} warm-up (median; canrun: bench's aggregate over the runs)")
    if "error" in bw:
        print(f"memory bandwidth: not measured ({bw['error']})")
    else:
        print(f"memory bandwidth (STREAM-like, bench/stream_bw.c, {bw['threads']} threads): "
              f"triad {bw['triad_gb_s']:.1f} GB/s, copy {bw['copy_gb_s']:.1f} GB/s; "
              f"decode limit = triad bandwidth / bytes of weights read per token (a row that shows the triads "
              f"measured right before and after its engine's run: of the limit at their mean)")
    if c.get("cpu_flags"):
        print("processor flags: " + " ".join(c["cpu_flags"]))
    for name, m in report["models"].items():
        print(f"\n## {m['label']}")
        if "error" in m:
            print(f"  {m['error']}")
            continue
        w = m["weights"]
        limit = m.get("decode_limit_tokens_per_s")
        print(f"  {w['parameters'] / 1e6:.1f} M parameters (checkpoint {','.join(w['checkpoint_dtypes'])}), "
              f"{w['bytes_read_per_token'] / 2**20:.0f} MiB of {c['precision']} weights read per decoded token"
              + (f" -> decode limit {limit:.1f} tokens/s" if limit else ""))
        header = ["engine", "precision", "prefill tok/s", "decode tok/s", "canrun/x prefill", "canrun/x decode",
                  "decode % of limit"]
        rows = []
        base = m["engines"].get("canrun")
        for engine, r in m["engines"].items():
            if not r["ok"]:
                rows.append([engine, "-", "FAILED", "", "", "", r["error"].replace("\n", " ")[:160]])
                continue
            ratio_p = ratio_d = "-"
            if base and base.get("ok"):
                ratio_p = f"{base['prefill_tokens_per_s'] / r['prefill_tokens_per_s']:.3f}"
                ratio_d = f"{base['decode_tokens_per_s'] / r['decode_tokens_per_s']:.3f}"
            own_limit = r.get("decode_limit_tokens_per_s", limit)
            frac = f"{100 * r['decode_tokens_per_s'] / own_limit:.1f}%" if own_limit else "-"
            triads = r.get("triad_gb_s_before_after")
            if triads and None not in triads:
                frac += f" (triad {triads[0]:.1f} -> {triads[1]:.1f}"
                frac += ", moved during the run)" if abs(triads[1] - triads[0]) > TRIAD_MOVED * min(triads) else ")"
            if r.get("runs"):  # the spread of the runs: a shared machine shows here
                frac += "  (decode runs: " + ", ".join(f"{x['decode_tokens_per_s']:.2f}" for x in r["runs"]) + ")"
            rows.append([engine, r["precision"], fmt(r["prefill_tokens_per_s"]), fmt(r["decode_tokens_per_s"], 2),
                         ratio_p, ratio_d, frac])
        widths = [max(len(str(x)) for x in col) for col in zip(header, *[r[:6] for r in rows] + [header])]
        line = "  " + " | ".join(h.ljust(widths[i]) if i < 6 else h for i, h in enumerate(header))
        print(line)
        print("  " + "-+-".join("-" * widths[i] for i in range(6)) + "-+-" + "-" * 17)
        for r in rows:
            print("  " + " | ".join(str(x).ljust(widths[i]) if i < 6 else str(x) for i, x in enumerate(r)))
        for engine, r in m["engines"].items():  # what each engine's kernels ran with here
            if r.get("ok") and r.get("isa"):
                print(f"  instruction set, {engine}: {r['isa']}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--table":  # print the table of a JSON written earlier
        print_table(json.loads(Path(sys.argv[2]).read_text()), None)
    else:
        main()
