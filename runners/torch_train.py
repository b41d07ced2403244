#!/usr/bin/env python3
"""One canrun support-lab training check of a checkpoint on PyTorch and Transformers, standalone.

The tested run loads the checkpoint with from_pretrained (AutoModelForCausalLM, weights in
float32, every dropout probability of its config set to 0 so that the steps repeat exactly;
--dtype bfloat16 computes under torch.autocast), wraps it in LoRA adapters (peft) when
asked, compiles it with the chosen torch.compile backend (unless "none") and fine-tunes it for a
fixed number of steps on the instruction examples below, each turned into text by the model's
chat template with the loss on the response's tokens only: AdamW, learning rate decaying linearly
to zero, gradients clipped to norm 1, a fixed seed, batch and sequence length, gradients
accumulated over a fixed number of micro-batches per step. It records the loss, the gradient norm
and the time of every step, the tokens per step and the peak memory.

The restart check saves a checkpoint (model, optimizer, scheduler, random number generators) after
step `restart_step`, runs this script again in a fresh process from that checkpoint to the last
step, and reports the losses it saw. The reference is the same steps on torch's CPU in float32,
eager.

Prints one JSON object as the last line of its standard output, also when a stage fails (the
"error" field then names the stage — import, device, load, data, compile, forward, backward,
optimizer, checkpoint, restart or reference — the exception's type and its message), and exits 0;
canrun check --runner torch --workload train reads that object into a dataset row.

Usage: python3 run.py [MODEL_DIR]   (default: the folder canrun checked)
"""

import json
import os
import platform
import resource
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
    "lora": False,
    "steps": 20,
    "batch_size": 2,
    "sequence_length": 64,
    "gradient_accumulation": 1,
    "learning_rate": 0.0001,
    "seed": 0,
    "restart_step": 10,
    "examples": [],
}

# The restart check's fresh process: the checkpoint to resume from, and where to write its losses.
RESUME_VARIABLE = "CANRUN_TRAIN_RESUME"
RESUME_RESULT_VARIABLE = "CANRUN_TRAIN_RESUME_RESULT"
# A test hook: "backward" makes every backward pass raise, so that the check's failure path runs.
FAULT_VARIABLE = "CANRUN_TRAIN_FAULT"


class StageError(Exception):
    """An exception raised during `stage`, kept with it."""

    def __init__(self, stage, error):
        super().__init__(str(error))
        self.stage = stage
        self.error = error


def error_entry(stage, error):
    message = str(error).strip() or repr(error)
    return {"stage": stage, "type": type(error).__name__, "message": message[:4000]}


def versions():
    found = {"python": platform.python_version()}
    for name in ("torch", "transformers", "peft"):
        try:
            found[name] = __import__(name).__version__
        except Exception as error:  # reported, not fatal: the stage that needs it fails by name
            found[name] = None
            found[name + "_error"] = str(error)
    return found


def example_ids(tokenizer, vocab_size, example):
    """(ids, labels) of one example: the chat template's user turn, then the assistant's response;
    the loss falls on the tokens after those the prompt's text shares with the whole (labels -100
    there). A tokenizer without a template: "User: ...\\nAssistant: ..." and its end-of-sequence
    token; no tokenizer (synthetic weights): the text's bytes modulo the vocabulary."""
    user = [{"role": "user", "content": example["prompt"]}]
    if tokenizer is None:
        prompt = [b % vocab_size for b in f"User: {example['prompt']}\nAssistant:".encode()]
        response = [b % vocab_size for b in (" " + example["response"]).encode()]
        return prompt + response, [-100] * len(prompt) + response
    if tokenizer.chat_template:
        prompt_text = tokenizer.apply_chat_template(user, add_generation_prompt=True, tokenize=False)
        full_text = tokenizer.apply_chat_template(user + [{"role": "assistant", "content": example["response"]}],
                                                  tokenize=False)
    else:
        prompt_text = f"User: {example['prompt']}\nAssistant:"
        full_text = prompt_text + " " + example["response"] + (tokenizer.eos_token or "")
    prompt = tokenizer(prompt_text, add_special_tokens=False).input_ids
    full = tokenizer(full_text, add_special_tokens=False).input_ids
    shared = 0
    while shared < min(len(prompt), len(full)) and prompt[shared] == full[shared]:
        shared += 1
    if shared == len(full):
        raise ValueError(f"the example {example['prompt']!r} has no response tokens after its prompt")
    return full, [-100] * shared + full[shared:]


def without_dropout(transformers, model_dir):
    """The model's config with every dropout probability 0: the steps repeat exactly on any device,
    and the loss is the one a forward pass computes (canrun's step-0 loss has no dropout)."""
    config = transformers.AutoConfig.from_pretrained(model_dir)
    for sub_config in {id(config): config, id(config.get_text_config()): config.get_text_config()}.values():
        for name, value in list(vars(sub_config).items()):
            if ("dropout" in name or name.endswith("_pdrop") or name == "layerdrop") and isinstance(value, float):
                setattr(sub_config, name, 0.0)
    return config


def make_batches(torch, params, tokenizer, vocab_size, pad_id):
    """Every step's micro-batches: (ids, attention mask, labels) tensors of batch_size rows of
    sequence_length tokens, right-padded; step s's micro-batch m holds the examples from
    (s * accumulation + m) * batch_size on, cycling through the list."""
    examples = [example_ids(tokenizer, vocab_size, e) for e in params["examples"]]
    if not examples:
        raise ValueError("no training examples")
    length, batch, accumulation = params["sequence_length"], params["batch_size"], params["gradient_accumulation"]
    steps = []
    for step in range(params["steps"]):
        micro_batches = []
        for micro in range(accumulation):
            first = (step * accumulation + micro) * batch
            ids, mask, labels = [], [], []
            for row in range(batch):
                tokens, targets = examples[(first + row) % len(examples)]
                tokens, targets = tokens[:length], targets[:length]
                padding = length - len(tokens)
                ids.append(tokens + [pad_id] * padding)
                mask.append([1] * len(tokens) + [0] * padding)
                labels.append(targets + [-100] * padding)
            micro_batches.append((torch.tensor(ids), torch.tensor(mask), torch.tensor(labels)))
        steps.append(micro_batches)
    return steps


def unpadded(micro_batches):
    """A step's micro-batches as canrun scores them: each row's real tokens and labels."""
    entries = []
    for ids, mask, labels in micro_batches:
        lengths = mask.sum(dim=1).tolist()
        entries.append({"ids": [ids[r, :n].tolist() for r, n in enumerate(lengths)],
                        "labels": [labels[r, :n].tolist() for r, n in enumerate(lengths)]})
    return entries


def synchronize(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "neuron" and hasattr(torch, "neuron") and hasattr(torch.neuron, "synchronize"):
        torch.neuron.synchronize()


def seed_everything(torch, seed):
    import random

    import numpy

    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


def rng_states(torch, device):
    import random

    import numpy

    states = {"python": random.getstate(), "numpy": numpy.random.get_state(), "torch": torch.get_rng_state()}
    if device == "cuda":
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng_states(torch, device, states):
    import random

    import numpy

    random.setstate(states["python"])
    numpy.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if device == "cuda":
        torch.cuda.set_rng_state_all(states["cuda"])


def train(params, model_dir, device, dtype, compile_backend, resume_from=None, save_to=None):
    """Fine-tunes for params["steps"] steps (from the checkpoint's step on, when resuming) and
    returns what it measured; a failure raises StageError naming its stage."""
    result = {}
    stage = "import"
    try:
        import torch
        import transformers

        if device == "neuron":
            import torch_neuronx  # noqa: F401  (registers the neuron device and compile backend)
        stage = "device"
        torch.empty(1, device=device)  # a device torch lacks fails here, with torch's message
        stage = "load"
        seed_everything(torch, params["seed"])
        start = time.monotonic()
        model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                                  config=without_dropout(transformers, model_dir))
        if params["lora"]:
            import peft

            config = peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules="all-linear")
            model = peft.get_peft_model(model, config)
        model.to(device)
        model.train()
        result["load_time_s"] = time.monotonic() - start
        stage = "data"
        tokenizer = None
        if any(os.path.exists(os.path.join(model_dir, f)) for f in ("tokenizer.json", "tokenizer_config.json")):
            tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
        vocab_size = model.config.get_text_config().vocab_size
        pad_id = 0
        if tokenizer is not None:
            pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        batches = make_batches(torch, params, tokenizer, vocab_size, pad_id)
        trained = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(trained, lr=params["learning_rate"])
        steps = params["steps"]
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / steps)
        first_step = 0
        if resume_from:
            stage = "restart"
            saved = torch.load(resume_from, weights_only=False)
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            restore_rng_states(torch, device, saved["rng"])
            first_step = saved["step"]
        forward = model if compile_backend == "none" else torch.compile(model, backend=compile_backend)
        autocast = dtype == "bfloat16"
        losses, norms, times = [], [], []
        for step in range(first_step, steps):
            start = time.monotonic()
            optimizer.zero_grad(set_to_none=True)
            step_loss = 0.0
            for ids, mask, labels in batches[step]:
                # torch.compile compiles on the first call: a failure there is the compile's.
                stage = "compile" if compile_backend != "none" and step == first_step else "forward"
                with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=autocast):
                    loss = forward(input_ids=ids.to(device), attention_mask=mask.to(device),
                                   labels=labels.to(device)).loss
                stage = "backward"
                if os.environ.get(FAULT_VARIABLE) == "backward":
                    loss.register_hook(broken_backward)
                (loss / len(batches[step])).backward()
                step_loss += loss.item()
            stage = "optimizer"
            norm = torch.nn.utils.clip_grad_norm_(trained, max_norm=1.0)
            optimizer.step()
            scheduler.step()
            synchronize(torch, device)
            times.append(time.monotonic() - start)
            losses.append(step_loss / len(batches[step]))
            norms.append(float(norm))
            if save_to and step + 1 == params["restart_step"]:
                stage = "checkpoint"
                torch.save({"step": step + 1, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "scheduler": scheduler.state_dict(), "rng": rng_states(torch, device)}, save_to)
        result.update(losses=losses, grad_norms=norms, step_times_s=times)
        result["tokens_per_step"] = int(sum(int(mask.sum()) for _, mask, _ in batches[0]))
        result["step0_batches"] = unpadded(batches[0])
        if device == "cuda":
            result["peak_device_memory_bytes"] = torch.cuda.max_memory_allocated()
    except Exception as error:  # every failure is a result, named by its stage
        raise StageError(stage, error) from error
    return result


def broken_backward(gradient):
    raise RuntimeError(f"backward broken on purpose ({FAULT_VARIABLE}=backward)")


def resumed_losses(params, model_dir, checkpoint):
    """The restart check's second half: this script in a fresh process, from the checkpoint."""
    result_file = checkpoint + ".result.json"
    env = dict(os.environ, **{RESUME_VARIABLE: checkpoint, RESUME_RESULT_VARIABLE: result_file})
    code = subprocess.run([sys.executable, os.path.abspath(__file__), model_dir], env=env).returncode
    if not os.path.exists(result_file):
        raise RuntimeError(f"the resumed process exited with code {code} and wrote no result")
    with open(result_file) as f:
        resumed = json.load(f)
    if "error" in resumed:
        error = resumed["error"]
        raise RuntimeError(f"{error['stage']}: {error['type']}: {error['message']}")
    return resumed["losses"]


def resume_main(params, model_dir):
    """The fresh process of the restart check: the tested stack from the checkpoint on."""
    try:
        result = train(params, model_dir, params["device"], params["dtype"], params["compile"],
                       resume_from=os.environ[RESUME_VARIABLE])
        output = {"losses": result["losses"]}
    except StageError as failure:
        traceback.print_exception(failure.error, file=sys.stderr)
        output = {"error": error_entry(failure.stage, failure.error)}
    with open(os.environ[RESUME_RESULT_VARIABLE], "w") as f:
        json.dump(output, f)


def main():
    params = dict(PARAMETERS)
    model_dir = sys.argv[1] if len(sys.argv) > 1 else params["model_dir"]
    if RESUME_VARIABLE in os.environ:
        resume_main(params, model_dir)
        return
    output = {"parameters": params, "model_dir": model_dir, "versions": versions(), "workload": "train"}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            checkpoint = os.path.join(scratch, "checkpoint.pt")
            output.update(train(params, model_dir, params["device"], params["dtype"], params["compile"],
                                save_to=checkpoint))
            # The tested run's peak, before the restart check and the reference add theirs.
            output["peak_host_memory_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            if 0 < params["restart_step"] < params["steps"]:
                try:
                    output["restart_step"] = params["restart_step"]
                    output["resumed_losses"] = resumed_losses(params, model_dir, checkpoint)
                except Exception as error:
                    raise StageError("restart", error) from error
        try:
            reference = train(params, model_dir, "cpu", "float32", "none")
        except StageError as failure:
            raise StageError("reference", failure.error) from failure.error
        output["reference_losses"] = reference["losses"]
        output["reference_grad_norms"] = reference["grad_norms"]
    except StageError as failure:
        traceback.print_exception(failure.error, file=sys.stderr)
        output["error"] = error_entry(failure.stage, failure.error)
    print(json.dumps(output))


if __name__ == "__main__":
    main()
