#!/usr/bin/env python3
"""One canrun support-lab check of a checkpoint on PyTorch and Transformers, standalone.

The tested run loads the checkpoint with from_pretrained (AutoModelForCausalLM, or for the
image-text-to-text task AutoModelForImageTextToText, asked about canrun's check image) on the
chosen device and dtype, compiles its forward with the chosen torch.compile backend (unless
"none"), and generates greedily over a static cache: once to warm up (compiling), once measured.
The reference is the same checkpoint on torch's CPU in float32, eager, with the default dynamic
cache. A model planned on N > 1 cores runs its tested half on N torch.distributed workers that
this script starts itself, sharded with transformers' tensor-parallel plan (tp_plan="auto"): gloo
on cpu, nccl on cuda, the Neuron backend on neuron.

An encoder task (sentence-similarity, feature-extraction: SentenceTransformer embeds the check
sentences; text-ranking: CrossEncoder scores the check query against the check documents, from
sentence-transformers) runs the same way: the tested run on the chosen device, dtype and compile
backend, once to warm up and once measured, the reference on CPU in float32, eager; canrun compares
the embeddings by cosine similarity and the scores by order and difference.

Prints one JSON object as the last line of its standard output, also when a stage fails (the
"error" field then names the stage, the exception's type and its message), and exits 0;
canrun check --runner torch reads that object into a dataset row.

Usage: python3 run.py [MODEL_DIR]   (default: the folder canrun checked)
"""

import json
import logging
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import traceback

# What canrun wrote for this row; the rest of the script is the same for every row.
PARAMETERS = {
    "model_dir": "",
    "device": "cpu",
    "compile": "none",
    "dtype": "float32",
    "cores": 1,
    "task": "text-generation",
    "prompt": "The capital of France is",
    "instruction": "Describe this image.",
    "new_tokens": 32,
    "top_k": 5,
    "sentences": [],
    "query": "",
    "documents": [],
}

WORKER_RESULT_VARIABLE = "CANRUN_TORCH_WORKER_RESULT"


class StageError(Exception):
    """An exception raised during `stage`, kept with it."""

    def __init__(self, stage, error):
        super().__init__(str(error))
        self.stage = stage
        self.error = error


def error_entry(stage, error):
    message = str(error).strip() or repr(error)
    return {"stage": stage, "type": type(error).__name__, "message": message[:4000]}


class RecompileCounter(logging.Handler):
    """Counts torch._dynamo's recompile records: one per code object compiled again."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        self.count += 1


def torch_dtype(torch, name):
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def has_tokenizer(model_dir):
    return any(os.path.exists(os.path.join(model_dir, name)) for name in ("tokenizer.json", "tokenizer_config.json"))


def byte_ids(text, vocab_size):
    """A folder without a tokenizer (synthetic weights): the text's bytes modulo the vocabulary."""
    return [byte % vocab_size for byte in text.encode("utf-8")]


def check_image():
    """canrun's check image (check_image in src/lab/tested_run.cpp): 64x48 gradients, a yellow square."""
    from PIL import Image

    pixels = bytearray()
    for y in range(48):
        for x in range(64):
            square = 20 <= x < 36 and 12 <= y < 28
            pixels += bytes((250, 240, 30) if square else (x * 4, y * 5, 255 - x * 2 - y))
    return Image.frombytes("RGB", (64, 48), bytes(pixels))


def synthetic_image_inputs(model, image, instruction):
    """canrun's check of synthetic weights (no tokenizer, no processor): Qwen's processor with the
    tower's patch sizes, mean and std 0.5 and transformers' default pixel bounds; the image's tokens,
    then the instruction's bytes modulo the vocabulary. mm_token_type_ids marks the image tokens, as
    the model's processor does: without it the model gives them text positions."""
    import torch
    from transformers import Qwen2VLImageProcessor

    vision = model.config.vision_config
    processor = Qwen2VLImageProcessor(patch_size=vision.patch_size, temporal_patch_size=vision.temporal_patch_size,
                                      merge_size=vision.spatial_merge_size, image_mean=[0.5] * 3, image_std=[0.5] * 3,
                                      size={"shortest_edge": 56 * 56, "longest_edge": 28 * 28 * 1280})
    pixels = dict(processor(images=[image], return_tensors="pt"))
    image_tokens = int(pixels["image_grid_thw"].prod()) // vision.spatial_merge_size**2
    text = byte_ids(instruction, model.config.get_text_config().vocab_size)
    pixels["mm_token_type_ids"] = torch.tensor([[1] * image_tokens + [0] * len(text)])
    return [model.config.image_token_id] * image_tokens + text, pixels


def check_inputs(model, model_dir, params):
    """The check's prompt as canrun encodes it: (ids, generate()'s other inputs, tokenizer or None).
    Text: the tokenizer's ids with its special tokens. Image-text-to-text: the check image and the
    instruction as one user turn through the chat template, expanded by the model's processor."""
    vocab_size = model.config.get_text_config().vocab_size
    if params["task"] != "image-text-to-text":
        if not has_tokenizer(model_dir):
            return byte_ids(params["prompt"], vocab_size), {}, None
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        return tokenizer(params["prompt"]).input_ids, {}, tokenizer
    image = check_image()
    if not has_tokenizer(model_dir):
        ids, pixels = synthetic_image_inputs(model, image, params["instruction"])
        return ids, pixels, None
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(model_dir)
    turn = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": params["instruction"]}]}]
    text = processor.apply_chat_template(turn, add_generation_prompt=True)
    inputs = dict(processor(text=[text], images=[image], return_tensors="pt"))
    ids = inputs.pop("input_ids")[0].tolist()
    inputs.pop("attention_mask", None)
    return ids, inputs, processor.tokenizer


def generate(torch, model, ids, extra, device, new_tokens, top_k, cache):
    """Greedy generation: the new tokens and, per token, the ids of its top_k logits."""
    input_ids = torch.tensor([ids], device=device)
    options = {"cache_implementation": "static"} if cache == "static" else {}
    # Pixels in the model's dtype, grids and other integers as they are.
    for name, value in extra.items():
        options[name] = value.to(device, model.dtype) if value.is_floating_point() else value.to(device)
    with torch.no_grad():
        out = model.generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=new_tokens,
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
            **options,
        )
    tokens = out.sequences[0, len(ids) :].tolist()
    top = [logits[0].float().topk(top_k).indices.tolist() for logits in out.logits]
    return tokens, top


def load(torch, params, model_dir, dtype, device, sharded):
    import transformers

    auto = transformers.AutoModelForImageTextToText if params["task"] == "image-text-to-text" \
        else transformers.AutoModelForCausalLM
    if sharded:
        config = transformers.DistributedConfig(tp_plan="auto")
        return auto.from_pretrained(model_dir, dtype=dtype, distributed_config=config)
    return auto.from_pretrained(model_dir, dtype=dtype).to(device)


def tested_run(params, model_dir, sharded):
    """Load, compile and generate on the tested stack; returns the fields it measured."""
    result = {}
    stage = "import"
    try:
        import torch
        from torch._dynamo.utils import counters

        device = params["device"]
        if device == "neuron":
            import torch_neuronx  # noqa: F401  (registers the neuron device and compile backend)
        stage = "device"
        torch.empty(1, device=device)  # a device torch lacks fails here, with torch's message
        stage = "load"
        start = time.monotonic()
        model = load(torch, params, model_dir, torch_dtype(torch, params["dtype"]), device, sharded)
        model.eval()
        result["load_time_s"] = time.monotonic() - start
        stage = "prompt"
        ids, extra, tokenizer = check_inputs(model, model_dir, params)
        recompiles = RecompileCounter()
        if params["compile"] != "none":
            stage = "compile"
            torch._logging.set_logs(recompiles=True)
            logging.getLogger("torch._dynamo.guards.__recompiles").addHandler(recompiles)
            model.forward = torch.compile(model.forward, backend=params["compile"], dynamic=False)
            start = time.monotonic()
            generate(torch, model, ids, extra, device, params["new_tokens"], params["top_k"], "static")
            warm_up = time.monotonic() - start
        stage = "generate"
        start = time.monotonic()
        tokens, top = generate(torch, model, ids, extra, device, params["new_tokens"], params["top_k"], "static")
        result["generate_time_s"] = time.monotonic() - start
        if params["compile"] != "none":
            # The warm-up compiled and generated; the measured run only generated.
            result["compile_time_s"] = max(0.0, warm_up - result["generate_time_s"])
            result["compiled_graphs"] = counters["stats"]["unique_graphs"]
            result["graph_breaks"] = sum(counters["graph_break"].values())
            result["recompilations"] = recompiles.count
            result["eager_fallback"] = counters["stats"]["unique_graphs"] == 0
        result["tokens"] = tokens
        result["top_ids"] = top
        result["prompt_ids"] = ids
        if tokenizer is not None:
            result["text"] = tokenizer.decode(tokens)
        if device == "cuda":
            result["peak_device_memory_bytes"] = torch.cuda.max_memory_allocated()
        elif device == "neuron":
            result["peak_device_memory_bytes"] = neuron_peak_memory(torch)
    except Exception as error:  # every failure is a result, named by its stage
        raise StageError(stage, error) from error
    return result


def neuron_peak_memory(torch):
    """The Neuron runtime's peak device memory, when its torch backend reports one."""
    memory = getattr(torch, "neuron", None)
    reporter = getattr(memory, "max_memory_allocated", None)
    return reporter() if reporter else None


def reference_run(params, model_dir):
    import torch

    model = load(torch, params, model_dir, torch.float32, "cpu", sharded=False)
    model.eval()
    ids, extra, _ = check_inputs(model, model_dir, params)
    tokens, top = generate(torch, model, ids, extra, "cpu", params["new_tokens"], params["top_k"], "dynamic")
    return {"reference_tokens": tokens, "reference_top_ids": top}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sharded_tested_run(params, model_dir):
    """Starts one worker per core (this script again, as torch.distributed rank R of N) and
    returns rank 0's result."""
    cores = params["cores"]
    with tempfile.TemporaryDirectory() as scratch:
        result_file = os.path.join(scratch, "rank0.json")
        port = str(free_port())
        workers = []
        for rank in range(cores):
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(cores),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port, OMP_NUM_THREADS="1")
            env[WORKER_RESULT_VARIABLE] = result_file
            workers.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), model_dir], env=env))
        codes = [worker.wait() for worker in workers]
        if not os.path.exists(result_file):
            raise StageError("load", RuntimeError(f"the {cores} torch.distributed workers exited with codes {codes} "
                                                  "and rank 0 wrote no result"))
        with open(result_file) as f:
            result = json.load(f)
    if "error" in result:
        error = result.pop("error")
        raise StageError(error["stage"], RuntimeError(f"{error['type']}: {error['message']}"))
    return result


def worker_main(params, model_dir):
    """Rank R of a sharded run: its part of the tested run; rank 0 writes the result."""
    try:
        result = tested_run(params, model_dir, sharded=True)
    except StageError as failure:
        traceback.print_exception(failure.error, file=sys.stderr)
        result = {"error": error_entry(failure.stage, failure.error)}
    if os.environ["RANK"] == "0":
        with open(os.environ[WORKER_RESULT_VARIABLE], "w") as f:
            json.dump(result, f)
    try:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # the result is written; a failing teardown changes nothing
        pass


def versions():
    found = {"python": platform.python_version()}
    for name in ("torch", "transformers", "sentence_transformers"):
        try:
            found[name] = __import__(name).__version__
        except Exception as error:  # reported, not fatal: the stage that needs it fails by name
            found[name] = None
            found[name + "_error"] = str(error)
    return found


ENCODER_TASKS = ("sentence-similarity", "feature-extraction", "text-ranking")


def encoder_outputs(model, params):
    """The embeddings of the check sentences, or the first score of each check document."""
    if params["task"] == "text-ranking":
        scores = model.predict([(params["query"], d) for d in params["documents"]], batch_size=len(params["documents"]),
                               convert_to_numpy=True)
        return [float(row if row.ndim == 0 else row.reshape(-1)[0]) for row in scores]
    embeddings = model.encode(params["sentences"], batch_size=len(params["sentences"]), convert_to_numpy=True)
    return embeddings.astype("float64").tolist()


def load_encoder(params, model_dir, device, dtype_name):
    import torch
    import sentence_transformers

    dtype = torch_dtype(torch, dtype_name)
    if params["task"] == "text-ranking":
        return sentence_transformers.CrossEncoder(model_dir, device=device, model_kwargs={"dtype": dtype})
    return sentence_transformers.SentenceTransformer(model_dir, device=device, model_kwargs={"dtype": dtype})


def encoder_run(params, model_dir):
    """The tested run of an encoder (warm-up, then measured) and its reference; the fields they gave."""
    result = {}
    stage = "import"
    try:
        import torch
        from torch._dynamo.utils import counters
        import sentence_transformers  # noqa: F401

        device = params["device"]
        if device == "neuron":
            import torch_neuronx  # noqa: F401
        stage = "device"
        torch.empty(1, device=device)
        stage = "load"
        start = time.monotonic()
        model = load_encoder(params, model_dir, device, params["dtype"])
        result["load_time_s"] = time.monotonic() - start
        stage = "compile"
        recompiles = RecompileCounter()
        if params["compile"] != "none":
            logging.getLogger("torch._dynamo").addHandler(recompiles)
            torch._logging.set_logs(recompiles=True)
            counters.clear()
            model.forward = torch.compile(model.forward, backend=params["compile"])
        start = time.monotonic()
        encoder_outputs(model, params)
        warm_up = time.monotonic() - start
        stage = "generate"
        start = time.monotonic()
        outputs = encoder_outputs(model, params)
        measured = time.monotonic() - start
        texts = len(params["documents"] if params["task"] == "text-ranking" else params["sentences"])
        result["sentences_per_s"] = texts / max(measured, 1e-9)
        if params["compile"] != "none":
            result["compile_time_s"] = max(0.0, warm_up - measured)
            result["graph_breaks"] = sum(counters["graph_break"].values())
            result["recompilations"] = recompiles.count
            result["eager_fallback"] = counters["stats"]["unique_graphs"] == 0
        if device == "cuda":
            result["peak_device_memory_bytes"] = torch.cuda.max_memory_allocated()
        key = "scores" if params["task"] == "text-ranking" else "embeddings"
        result[key] = outputs
        del model
        stage = "reference"
        reference = load_encoder(params, model_dir, "cpu", "float32")
        result["reference_" + key] = encoder_outputs(reference, params)
    except Exception as error:
        raise StageError(stage, error) from error
    return result


def main():
    params = dict(PARAMETERS)
    model_dir = sys.argv[1] if len(sys.argv) > 1 else params["model_dir"]
    if WORKER_RESULT_VARIABLE in os.environ:
        worker_main(params, model_dir)
        return
    output = {"parameters": params, "model_dir": model_dir, "versions": versions()}
    try:
        if params["task"] in ENCODER_TASKS:
            output.update(encoder_run(params, model_dir))
            print(json.dumps(output))
            return
        if params["cores"] > 1:
            output.update(sharded_tested_run(params, model_dir))
        else:
            output.update(tested_run(params, model_dir, sharded=False))
        try:
            output.update(reference_run(params, model_dir))
        except Exception as error:
            raise StageError("reference", error) from error
    except StageError as failure:
        traceback.print_exception(failure.error, file=sys.stderr)
        output["error"] = error_entry(failure.stage, failure.error)
    print(json.dumps(output))


if __name__ == "__main__":
    main()
