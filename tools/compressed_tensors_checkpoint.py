"""Rewrites a transformers checkpoint folder as llm-compressor publishes W4A16 / W8A16 models:
every Linear but lm_head quantized to symmetric int weights with compressed-tensors (its own
quantization config, qparams and `pack-quantized` compressor), a scale per row and group of
inputs (or per row), min-max scales. The packed-int fixtures use it, and so can a benchmark of
quantized weights:

    python3 tools/compressed_tensors_checkpoint.py FOLDER --bits 4 --group-size 128
    python3 tools/compressed_tensors_checkpoint.py FOLDER --bits 8          # per channel

Needs compressed-tensors (tools/requirements-tools.txt).
"""
import argparse

import torch
from compressed_tensors.compressors import ModelCompressor
from compressed_tensors.quantization import (QuantizationArgs, QuantizationConfig, QuantizationScheme,
                                             apply_quantization_config)
from compressed_tensors.quantization.utils import calculate_qparams
from transformers import AutoModelForCausalLM


def min_max(weight, group_size):
    if group_size:
        groups = weight.reshape(weight.shape[0], -1, group_size)
        return groups.amin(-1), groups.amax(-1)
    return weight.amin(-1, keepdim=True), weight.amax(-1, keepdim=True)


def pack_compressed(folder, bits, group_size=None):
    model = AutoModelForCausalLM.from_pretrained(folder, dtype="auto").eval()
    args = QuantizationArgs(num_bits=bits, type="int", symmetric=True,
                            strategy="group" if group_size else "channel", group_size=group_size)
    config = QuantizationConfig(config_groups={"group_0": QuantizationScheme(targets=["Linear"], weights=args)},
                                ignore=["lm_head"], format="pack-quantized")
    apply_quantization_config(model, config)
    with torch.no_grad():
        for module in model.modules():
            if hasattr(module, "weight_scale"):
                low, high = min_max(module.weight.float(), group_size)
                scale, _ = calculate_qparams(low, high, args)
                module.weight_scale.copy_(scale.reshape(module.weight_scale.shape))
    compressor = ModelCompressor.from_pretrained_model(model, quantization_format="pack-quantized")
    compressor.compress_model(model)
    model.save_pretrained(folder)
    compressor.update_config(folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="a transformers checkpoint folder (rewritten in place)")
    parser.add_argument("--bits", type=int, choices=[4, 8], default=4, help="bits per weight (default 4)")
    parser.add_argument("--group-size", type=int, default=None,
                        help="inputs per scale (default: one scale per row)")
    args = parser.parse_args()
    pack_compressed(args.folder, args.bits, args.group_size)


if __name__ == "__main__":
    main()
