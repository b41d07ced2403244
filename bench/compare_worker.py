"""One engine's measurement for bench/compare.py, run in the Python environment that has that engine.

    python compare_worker.py llama  GGUF      --threads T --prompt-tokens P --output-tokens O --runs R --warmup W
    python compare_worker.py hf     MODEL_DIR --mode eager|compile ...

Prints one JSON object on its last stdout line: per-run prefill/decode seconds and tokens/s, their
medians, the engine's versions, peak RSS. Prompts are random token ids (numpy seed), never text.
Each run is prefill of the prompt (giving the first token) then output-1 single-token decode steps,
greedy, no eos stop, so every run generates exactly `output` tokens like `canrun bench`.
"""
import argparse
import json
import resource
import statistics
import sys
import time


def median_summary(runs):
    return {
        "prefill_tokens_per_s": statistics.median(r["prefill_tokens_per_s"] for r in runs),
        "decode_tokens_per_s": statistics.median(r["decode_tokens_per_s"] for r in runs),
        "first_token_s": statistics.median(r["prefill_s"] for r in runs),
    }


def prompts(vocab_size, prompt_tokens, count, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab_size, size=prompt_tokens).tolist() for _ in range(count)]


def run_llama(args):
    import numpy as np
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=args.model,
        n_ctx=args.prompt_tokens + args.output_tokens + 8,
        n_batch=args.prompt_tokens,
        n_ubatch=args.prompt_tokens,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        logits_all=False,
        verbose=False,
    )
    vocab = llm.n_vocab()

    def greedy():
        # Llama.eval keeps no logits unless logits_all; read the last position's from the context.
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(vocab,))
        return int(np.argmax(logits))

    runs = []
    for i, ids in enumerate(prompts(vocab, args.prompt_tokens, args.warmup + args.runs, args.seed)):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(ids)
        token = greedy()
        t1 = time.perf_counter()
        for _ in range(args.output_tokens - 1):
            llm.eval([token])
            token = greedy()
        t2 = time.perf_counter()
        if i >= args.warmup:
            runs.append(timing(args, t1 - t0, t2 - t1))
    info = {"llama_cpp_python": llama_cpp.__version__}
    try:
        info["system_info"] = llama_cpp.llama_print_system_info().decode().strip()
    except Exception as e:  # an older binding: versions still tell the build
        info["system_info"] = f"unavailable: {e}"
    return runs, info, {"n_vocab": vocab}


def run_hf(args):
    import numpy as np
    import torch
    import transformers

    torch.set_num_threads(args.threads)
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.precision]
    model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype)
    model.eval()
    extra = {"attn_implementation": model.config._attn_implementation, "dtype": str(dtype)}
    if args.mode == "compile":
        # A static cache keeps the decode step's shapes fixed so the compiled graph is reused.
        model.forward = torch.compile(model.forward, dynamic=False)
        extra["cache"] = "static"
    vocab = model.config.vocab_size
    gen_kwargs = dict(
        do_sample=False,
        min_new_tokens=args.output_tokens,
        max_new_tokens=args.output_tokens,
        pad_token_id=0,
        eos_token_id=None,
    )
    if args.mode == "compile":
        gen_kwargs["cache_implementation"] = "static"

    class Stamps:
        # generate() calls put() with the prompt, then once per new token: the times of the
        # second call (first token) and the last one split prefill from decode.
        def __init__(self):
            self.times = []

        def put(self, value):
            self.times.append(time.perf_counter())

        def end(self):
            pass

    runs = []
    compile_s = None
    with torch.inference_mode():
        for i, ids in enumerate(prompts(vocab, args.prompt_tokens, args.warmup + args.runs, args.seed)):
            stamps = Stamps()
            input_ids = torch.tensor([ids], dtype=torch.long)
            t0 = time.perf_counter()
            out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), streamer=stamps, **gen_kwargs)
            t2 = time.perf_counter()
            generated = out.shape[1] - input_ids.shape[1]
            if generated != args.output_tokens:
                raise RuntimeError(f"generated {generated} tokens, expected {args.output_tokens}")
            t1 = stamps.times[1]
            if i == 0 and args.mode == "compile":
                compile_s = t2 - t0  # the first (warm-up) run includes compilation
            if i >= args.warmup:
                runs.append(timing(args, t1 - t0, stamps.times[-1] - t1))
    extra["first_run_s_including_compile"] = compile_s
    info = {"torch": torch.__version__, "transformers": transformers.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability()}  # the ISA torch's kernels run with
    return runs, info, extra


def timing(args, prefill_s, decode_s):
    return {
        "prefill_s": prefill_s,
        "decode_s": decode_s,
        "prefill_tokens_per_s": args.prompt_tokens / prefill_s,
        "decode_tokens_per_s": (args.output_tokens - 1) / decode_s,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("engine", choices=["llama", "hf"])
    p.add_argument("model")
    p.add_argument("--mode", default="eager", choices=["eager", "compile"])
    p.add_argument("--precision", default="f32", choices=["f32", "bf16"])
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--prompt-tokens", type=int, default=512)
    p.add_argument("--output-tokens", type=int, default=128)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.engine == "llama":
        runs, versions, extra = run_llama(args)
    else:
        runs, versions, extra = run_hf(args)
    result = {
        "runs": runs,
        **median_summary(runs),
        "versions": versions,
        "extra": extra,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    sys.stdout.flush()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
