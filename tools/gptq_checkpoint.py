"""Rewrites a transformers checkpoint folder as GPTQ checkpoints are published (checkpoint_format
`gptq`, the v1 layout AutoGPTQ and GPTQModel write): every Linear but lm_head quantized to
symmetric int4 or int8 by round-to-nearest with min-max scales per output and group of inputs,
packed by GPTQModel's own packer (its torch kernel's `pack`): `qweight` int32 words of 32 / bits
inputs per output, `scales` f16 [groups, out], `qzeros` int32 (the zero point minus one), `g_idx`
(each input's group, in order: no desc_act). The GPTQ fixtures use it:

    python3 tools/gptq_checkpoint.py FOLDER --bits 4 --group-size 32

Needs gptqmodel and optimum (tools/requirements-tools.txt).
"""
import argparse
import json
from pathlib import Path

import torch
from gptqmodel.nn_modules.qlinear.torch import TorchLinear
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM


def symmetric_scales(weight, bits, group_size):
    """GPTQ's symmetric min-max quantizer: scale = 2 max|w| / (2^bits - 1), zero = 2^(bits-1)."""
    out, inputs = weight.shape
    groups = weight.reshape(out, inputs // group_size, group_size)
    largest = torch.maximum(groups.amin(-1).abs(), groups.amax(-1))
    maxq = 2 ** bits - 1
    scales = 2 * largest / maxq
    scales[scales == 0] = 1
    zeros = torch.full_like(scales, (maxq + 1) // 2)
    return scales, zeros


def pack_gptq(folder, bits, group_size):
    folder = Path(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype="auto").eval()
    tensors = {name: t.detach().contiguous() for name, t in model.state_dict().items()}
    if model.config.get_text_config().tie_word_embeddings:
        tensors.pop("lm_head.weight", None)  # the embeddings, saved once
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear) or name.split(".")[-1] == "lm_head":
            continue
        out, inputs = module.weight.shape
        size = group_size or inputs
        scales, zeros = symmetric_scales(module.weight.float(), bits, size)
        packed = TorchLinear(bits=bits, group_size=group_size or -1, sym=True, desc_act=False, in_features=inputs,
                             out_features=out, bias=module.bias is not None)
        packed.pack(module, scales, zeros, torch.arange(inputs, dtype=torch.int32) // size)
        del tensors[name + ".weight"]
        tensors.pop(name + ".bias", None)
        for buffer in ("qweight", "qzeros", "scales", "g_idx", "bias"):
            value = getattr(packed, buffer, None)
            if value is not None:
                tensors[f"{name}.{buffer}"] = value.detach().contiguous()
        # The v1 layout stores each zero point minus one.
        tensors[name + ".qzeros"] = tensors[name + ".qzeros"] - int(
            sum(1 << (bits * i) for i in range(32 // bits)))
    written = folder / "model.safetensors.partial"
    save_file(tensors, written, metadata={"format": "pt"})
    for stale in folder.glob("model*.safetensors*"):
        if stale != written:
            stale.unlink()
    written.rename(folder / "model.safetensors")
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "gptq", "bits": bits, "group_size": group_size or -1,
                                     "desc_act": False, "sym": True, "checkpoint_format": "gptq",
                                     "pack_dtype": "int32"}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="a transformers checkpoint folder (rewritten in place)")
    parser.add_argument("--bits", type=int, choices=[4, 8], default=4, help="bits per weight (default 4)")
    parser.add_argument("--group-size", type=int, default=None,
                        help="inputs per scale (default: one scale per output)")
    args = parser.parse_args()
    pack_gptq(args.folder, args.bits, args.group_size)


if __name__ == "__main__":
    main()
