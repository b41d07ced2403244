"""Rewrites a safetensors checkpoint folder as DeepSeek-V3 and the Qwen3 FP8 checkpoints are
published: each layer projection ("model.layers.*_proj.weight") as F8_E4M3 values with an F32
weight_scale_inv per BLOCK x BLOCK block (the block's largest magnitude / 448), and the
quantization_config that says so in config.json. The fp8 fixtures use it (blocks of 8), and so
can a benchmark of FP8 weights (blocks of 128):

    python3 tools/fp8_checkpoint.py FOLDER --block 128
"""
import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

FP8_MAX = 448.0  # the largest E4M3 value


def pack_fp8(folder, block):
    folder = Path(folder)
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    for name in [n for n in tensors if n.startswith("model.layers.") and n.endswith("_proj.weight")]:
        w = tensors[name].float()
        rows, cols = w.shape
        if rows % block or cols % block:
            raise SystemExit(f"{path}: tensor '{name}' {rows}x{cols} is not a whole number of {block}x{block} blocks")
        blocks = w.reshape(rows // block, block, cols // block, block)
        scale = blocks.abs().amax(dim=(1, 3)) / FP8_MAX
        scale = torch.where(scale > 0, scale, torch.ones_like(scale))
        tensors[name] = (blocks / scale[:, None, :, None]).reshape(rows, cols).to(torch.float8_e4m3fn)
        tensors[name + "_scale_inv"] = scale.contiguous()
    save_file(tensors, str(path), metadata={"format": "pt"})
    config_path = folder / "config.json"
    config = json.loads(config_path.read_text())
    config["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                     "weight_block_size": [block, block]}
    config_path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="a folder with config.json and one model.safetensors")
    parser.add_argument("--block", type=int, default=128, help="rows and columns per scale (default 128)")
    args = parser.parse_args()
    pack_fp8(args.folder, args.block)


if __name__ == "__main__":
    main()
