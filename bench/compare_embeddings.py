"""The driver and the workers of bench/compare_embeddings.sh.

The driver makes the inputs (bench/.cache/embeddings/: the texts, the synthetic bge-base-sized
folder, each model's ONNX export), then measures every engine in a process of its own, one after
another, on the same texts and threads:

- canrun: `build/canrun bench MODEL --texts F --batch B --json` (its sentence-transformers
  pipeline; compiled cpu backend, f32 products as the other engines run them).
- canrun-bf16: the same with `--products bf16` (f32 weights packed as bf16, vdpbf16ps where the
  processor has it); its ratios are printed apart, as a precision the others do not run.
- sentence-transformers: SentenceTransformer(MODEL).encode(batch, batch_size=B) on torch, eager.
- onnxruntime: the transformer exported by torch.onnx (dynamo), run by an InferenceSession with
  the tokenizer, padding to the batch's longest text, and the folder's pooling and normalisation
  in numpy, as an ONNX Runtime deployment runs it.

Each measures `warmup` calls and then `requests` calls of B texts, each call timed alone:
sentences/s over the measured calls, and the p50/p95 of a call's latency.
"""
import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "embeddings"
MINILM = ROOT / "models" / "all-MiniLM-L6-v2"
BATCHES = (1, 8, 32)
# Words that all-MiniLM-L6-v2's WordPiece vocabulary holds whole: a text of n words is n + 2 tokens.
WORDS = ("the a man woman dog cat runs eats quickly slowly house car tree river mountain blue green "
         "happy sad over under with city night day water light music book school food game street").split()
LENGTHS = {"short": 14, "long": 254}  # words: ~16 and ~256 tokens with [CLS] and [SEP]


def texts(kind, count=256):
    rng = random.Random(kind)
    return [" ".join(rng.choice(WORDS) for _ in range(LENGTHS[kind])) for _ in range(count)]


def requests_for(kind, batch):
    # About the same number of tokens per measurement whatever the batch.
    return max(4, (256 if kind == "short" else 32) // batch)


def make_bge_base():
    """bge-base-en-v1.5's shape (BERT, 768 wide, 12 layers, CLS pooling, Normalize) with random
    weights and all-MiniLM-L6-v2's tokenizer (the same uncased WordPiece vocabulary)."""
    import torch
    from transformers import BertConfig, BertModel
    folder = CACHE / "bge-base-synthetic"
    if (folder / "modules.json").is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                        intermediate_size=3072, max_position_embeddings=512, layer_norm_eps=1e-12)
    BertModel(config, add_pooling_layer=False).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(MINILM / name, folder / name)
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512, "do_lower_case": True}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 768, "pooling_mode": "cls"}))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    return folder


def export_onnx(folder):
    import torch
    from transformers import AutoModel
    path = CACHE / f"{folder.name}.onnx"
    if path.is_file():
        return path
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    batch, length = torch.export.Dim("batch"), torch.export.Dim("length", max=512)
    torch.onnx.export(LastHiddenState(model), (ids, torch.ones_like(ids)), str(path), dynamo=True,
                      input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                      dynamic_shapes={"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}})
    return path


def timed_calls(call, batches, warmup):
    latencies = []
    for i, batch in enumerate(batches):
        start = time.perf_counter()
        call(batch)
        if i >= warmup:
            latencies.append(time.perf_counter() - start)
    return latencies


def worker(args):
    """One engine on one model, kind and batch: prints its latencies as JSON."""
    lines = Path(args.texts).read_text().splitlines()
    batches = [[lines[(i * args.batch + j) % len(lines)] for j in range(args.batch)]
               for i in range(args.warmup + args.requests)]
    if args.worker == "sentence-transformers":
        import torch
        from sentence_transformers import SentenceTransformer
        torch.set_num_threads(args.threads)
        model = SentenceTransformer(args.model, device="cpu", model_kwargs={"attn_implementation": "eager"})
        with torch.inference_mode():
            latencies = timed_calls(lambda b: model.encode(b, batch_size=args.batch, convert_to_numpy=True),
                                    batches, args.warmup)
    else:
        import onnxruntime as ort
        from transformers import AutoTokenizer
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        pooling = json.loads((Path(args.model) / "1_Pooling" / "config.json").read_text())
        cls = pooling.get("pooling_mode") == "cls"

        def embed(batch):
            encoded = tokenizer(batch, padding=True, truncation=True, max_length=args.max_length, return_tensors="np")
            mask = encoded["attention_mask"].astype(np.int64)
            hidden = session.run(None, {"input_ids": encoded["input_ids"].astype(np.int64), "attention_mask": mask})[0]
            pooled = hidden[:, 0] if cls else (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        latencies = timed_calls(embed, batches, args.warmup)
    print(json.dumps({"latencies_s": latencies}))


def summary(latencies, batch):
    latencies = np.array(latencies)
    return {"sentences_per_s": batch * len(latencies) / latencies.sum(),
            "p50_ms": float(np.percentile(latencies, 50) * 1000), "p95_ms": float(np.percentile(latencies, 95) * 1000)}


def measure(engine, model, onnx, text_file, batch, requests, threads, max_length):
    if engine in ("canrun", "canrun-bf16"):
        products = ["--products", "bf16"] if engine == "canrun-bf16" else []
        result = subprocess.run([str(ROOT / "build" / "canrun"), "bench", str(model), "--texts", str(text_file),
                                 "--batch", str(batch), "--requests", str(requests), "--warmup", "1",
                                 "--threads", str(threads), "--json", *products],
                                capture_output=True, text=True, check=True)
        out = json.loads(result.stdout)
        return {"sentences_per_s": out["sentences_per_s"], "p50_ms": out["batch_latency_s"]["p50"] * 1000,
                "p95_ms": out["batch_latency_s"]["p95"] * 1000}
    result = subprocess.run([sys.executable, __file__, "--worker", engine, "--model", str(model), "--onnx", str(onnx),
                             "--texts", str(text_file), "--batch", str(batch), "--requests", str(requests),
                             "--warmup", "1", "--threads", str(threads), "--max-length", str(max_length)],
                            capture_output=True, text=True, check=True, env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    return summary(json.loads(result.stdout.strip().splitlines()[-1])["latencies_s"], batch)


def processor():
    flags = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            name = line.split(":", 1)[1].strip()
        if line.startswith("flags"):
            flags = line.split(":", 1)[1].split()
            break
    keep = [f for f in flags if f.startswith(("avx", "amx", "fma"))]
    return {"model_name": name, "simd_flags": keep, "machine": platform.machine()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--worker")
    parser.add_argument("--model")
    parser.add_argument("--onnx")
    parser.add_argument("--texts")
    parser.add_argument("--batch", type=int)
    parser.add_argument("--requests", type=int)
    parser.add_argument("--warmup", type=int)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", os.cpu_count())))
    parser.add_argument("--max-length", type=int, default=256)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    CACHE.mkdir(parents=True, exist_ok=True)
    models = {"all-minilm-l6-v2": MINILM, "bge-base-synthetic": None}
    wanted = os.environ.get("MODELS", ",".join(models)).split(",")
    engines = os.environ.get("ENGINES", "canrun,canrun-bf16,sentence-transformers,onnxruntime").split(",")
    ours = [e for e in ("canrun", "canrun-bf16") if e in engines]
    files = {}
    for kind in LENGTHS:
        files[kind] = CACHE / f"{kind}.txt"
        files[kind].write_text("\n".join(texts(kind)) + "\n")
    results = {"processor": processor(), "threads": args.threads, "rows": []}
    print(f"{'model':20} {'texts':6} {'batch':>5} " + " ".join(f"{e:>22}" for e in engines) +
          "".join(f" {e + '/st':>15} {e + '/ort':>15}" for e in ours))
    for name in wanted:
        folder = models[name] or make_bge_base()
        onnx = export_onnx(folder) if "onnxruntime" in engines else None
        max_length = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        for kind, text_file in files.items():
            for batch in BATCHES:
                row = {"model": name, "texts": kind, "batch": batch}
                for engine in engines:
                    row[engine] = measure(engine, folder, onnx, text_file, batch, requests_for(kind, batch),
                                          args.threads, max_length)
                results["rows"].append(row)
                rate = {e: row[e]["sentences_per_s"] for e in engines}
                cells = " ".join(f"{rate[e]:9.1f}/s p50 {row[e]['p50_ms']:7.1f}ms" for e in engines)
                ratios = []
                for mine in ours:
                    for other in ("sentence-transformers", "onnxruntime"):
                        ratios.append(f"{rate[mine] / rate[other]:14.2f}x" if other in rate else f"{'-':>15}")
                print(f"{name:20} {kind:6} {batch:5} {cells} {' '.join(ratios)}", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
