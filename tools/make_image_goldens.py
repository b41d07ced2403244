"""Makes the test images in tests/fixtures/images and the image processors' goldens.

The images are small, of odd sizes, and cover the files people pass: RGB, grayscale and CMYK
JPEG, a JPEG with an EXIF orientation, RGBA, palette (with transparency), grayscale+alpha and
16-bit PNG, lossy and lossless WebP. Broken files for the error tests sit beside them.

Each image processor folder in tests/fixtures/image_processors holds a preprocessor_config.json
as the Hub ships them, with sizes made small so the goldens stay small. For each processor,
tests/goldens/images/<processor>.npy holds the `pixel_values` transformers returns for all the
images at once (in IMAGES order; a 2-D float32 array: the patches of Qwen's processors, or one
row per image otherwise) and <processor>.json records the class, the grid sizes and the shape.
Images go through transformers' own `load_image` (EXIF orientation, PIL's RGB conversion) and
then the processor transformers picks by default (its torchvision backend).

Run with the tools venv (tools/requirements-tools.txt, which pins torchvision):
    python tools/make_image_goldens.py
"""
import io
import json
from pathlib import Path

import numpy as np
import PIL
import torch
import torchvision
import transformers
from PIL import Image
from transformers import AutoImageProcessor
from transformers.image_transforms import convert_to_rgb
from transformers.image_utils import load_image

ROOT = Path(__file__).resolve().parent.parent
IMAGES_DIR = ROOT / "tests" / "fixtures" / "images"
PROCESSORS_DIR = ROOT / "tests" / "fixtures" / "image_processors"
GOLDENS_DIR = ROOT / "tests" / "goldens" / "images"

CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

# Folder name -> preprocessor_config.json. Qwen2-VL's and Qwen3-VL's are the published ones
# with smaller pixel bounds; SigLIP's is Gemma 3's kind with a smaller square size.
# Qwen's goldens (two temporal copies of every patch) and Idefics3's (many tiles an image) are
# large, so they take three images: one scaled up, one scaled down to its extreme aspect ratio,
# one with alpha; the others take all.
FEW_IMAGES = ["rgb_37x53.jpg", "wide_300x7.png", "rgba_61x23.png"]
PROCESSORS = {
    "qwen2_vl": {
        "image_processor_type": "Qwen2VLImageProcessor",
        "do_resize": True, "resample": 3, "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": True, "image_mean": CLIP_MEAN, "image_std": CLIP_STD, "do_convert_rgb": True,
        "min_pixels": 56 * 56, "max_pixels": 28 * 28 * 4,
        "patch_size": 14, "temporal_patch_size": 2, "merge_size": 2,
    },
    "qwen3_vl": {
        "image_processor_type": "Qwen2VLImageProcessor",
        "do_resize": True, "resample": 3, "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "do_convert_rgb": True, "size": {"shortest_edge": 32 * 32 * 2, "longest_edge": 32 * 32 * 3},
        "patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
    },
    "siglip": {
        "image_processor_type": "SiglipImageProcessor",
        "do_resize": True, "size": {"height": 30, "width": 30}, "resample": 2,
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_convert_rgb": True,
    },
    "gemma3": {
        "image_processor_type": "Gemma3ImageProcessor",
        "do_resize": True, "size": {"height": 24, "width": 24}, "resample": 2,
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_convert_rgb": True,
        "do_pan_and_scan": False,
    },
    "gemma3_pan_and_scan": {
        "image_processor_type": "Gemma3ImageProcessor",
        "do_resize": True, "size": {"height": 16, "width": 16}, "resample": 2,
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_convert_rgb": True,
        "do_pan_and_scan": True, "pan_and_scan_min_crop_size": 8, "pan_and_scan_max_num_crops": 3,
        "pan_and_scan_min_ratio_to_activate": 1.2,
    },
    "siglip_lanczos": {
        "image_processor_type": "SiglipImageProcessor",
        "do_resize": True, "size": {"height": 40, "width": 17}, "resample": 1,
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": False, "do_convert_rgb": True,
    },
    # LLaVA's: CLIP's short-side resize and center crop; the crop is wider than some images, so
    # torchvision pads them with zeros first.
    "clip": {
        "image_processor_type": "CLIPImageProcessor",
        "do_resize": True, "size": {"shortest_edge": 21}, "resample": 3,
        "do_center_crop": True, "crop_size": {"height": 21, "width": 27},
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": CLIP_MEAN, "image_std": CLIP_STD, "do_convert_rgb": True,
    },
    # SmolVLM's kind: the long side to 40, then tiles of 16 and the whole image (Lanczos).
    "idefics3": {
        "image_processor_type": "Idefics3ImageProcessor",
        "do_resize": True, "size": {"longest_edge": 40}, "max_image_size": {"longest_edge": 16},
        "do_image_splitting": True, "resample": 1, "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "do_convert_rgb": True, "do_pad": True,
    },
    # Gemma 4's, with 2-pixel patches so that its 630 padded patches an image stay small.
    "gemma4": {
        "image_processor_type": "Gemma4ImageProcessor",
        "do_resize": True, "resample": 3, "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": False, "image_mean": [0.0, 0.0, 0.0], "image_std": [1.0, 1.0, 1.0],
        "do_convert_rgb": True, "patch_size": 2, "max_soft_tokens": 70, "pooling_kernel_size": 3,
    },
    # Llama 4's with 8-pixel tiles and canvases of up to 6 of them.
    "llama4": {
        "image_processor_type": "Llama4ImageProcessor",
        "do_resize": True, "size": {"height": 8, "width": 8}, "resample": 2, "max_patches": 6,
        "resize_to_max_canvas": False, "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "do_convert_rgb": True,
    },
    # Mllama's with 8-pixel tiles, up to 4 an image.
    "mllama": {
        "image_processor_type": "MllamaImageProcessor",
        "do_resize": True, "size": {"height": 8, "width": 8}, "resample": 2, "max_image_tiles": 4,
        "do_pad": True, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_convert_rgb": True,
    },
    "siglip_bicubic": {
        "image_processor_type": "SiglipImageProcessor",
        "do_resize": True, "size": {"height": 19, "width": 45}, "resample": 3,
        "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": CLIP_MEAN, "image_std": CLIP_STD, "do_convert_rgb": True,
    },
}


def pattern(width, height, seed):
    """Smooth colour gradients with noise and a hard edge: resampling has something to get wrong."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    r = 255 * x / max(width - 1, 1)
    g = 255 * y / max(height - 1, 1)
    b = 127 + 120 * np.sin((x + 2 * y) / 3.0)
    rgb = np.stack([r, g, b], axis=-1) + rng.normal(0, 18, (height, width, 3))
    rgb[: height // 3, : width // 4] = [250, 10, 128]
    return np.clip(rgb, 0, 255).astype(np.uint8)


def exif_with_orientation(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def save(name, image, **options):
    buffer = io.BytesIO()
    image.save(buffer, **options)
    (IMAGES_DIR / name).write_bytes(buffer.getvalue())


def make_images():
    IMAGES_DIR.mkdir(parents=True, exist_ok=True)
    rgb = Image.fromarray(pattern(37, 53, 1))
    save("rgb_37x53.jpg", rgb, format="JPEG", quality=90)
    save("rgb_37x53_q60_444.jpg", rgb, format="JPEG", quality=60, subsampling=0)
    save("exif_rotate90_40x24.jpg", Image.fromarray(pattern(40, 24, 2)), format="JPEG", quality=92,
         exif=exif_with_orientation(6))
    save("exif_mirror_31x22.png", Image.fromarray(pattern(31, 22, 3)), format="PNG",
         exif=exif_with_orientation(5))
    save("gray_29x71.jpg", Image.fromarray(pattern(29, 71, 4)).convert("L"), format="JPEG", quality=85)
    save("cmyk_50x31.jpg", Image.fromarray(pattern(50, 31, 5)).convert("CMYK"), format="JPEG", quality=90)
    rgba = Image.fromarray(np.dstack([pattern(61, 23, 6), pattern(61, 23, 7)[..., 0]]), "RGBA")
    save("rgba_61x23.png", rgba, format="PNG")
    palette = Image.fromarray(pattern(45, 45, 8)).quantize(colors=16)
    palette.info["transparency"] = 3
    save("palette_45x45.png", palette, format="PNG", transparency=3)
    gray_alpha = Image.fromarray(pattern(33, 40, 9)).convert("LA")
    save("gray_alpha_33x40.png", gray_alpha, format="PNG")
    rgb16 = (pattern(26, 35, 10).astype(np.uint16) * 257 + np.arange(26, dtype=np.uint16)[None, :, None])
    write_png16("rgb16_26x35.png", rgb16, color_type=2)
    save("lossy_41x27.webp", Image.fromarray(pattern(41, 27, 11)), format="WEBP", quality=80)
    save("lossless_rgba_41x27.webp", Image.fromarray(np.dstack([pattern(41, 27, 12), pattern(41, 27, 13)[..., 1]]),
                                                     "RGBA"), format="WEBP", lossless=True)
    save("wide_300x7.png", Image.fromarray(pattern(300, 7, 14)), format="PNG")
    save("progressive_rotate270_27x38.jpg", Image.fromarray(pattern(27, 38, 15)), format="JPEG", quality=88,
         progressive=True, exif=exif_with_orientation(8))
    save("exif_rotate180_35x20.webp", Image.fromarray(pattern(35, 20, 16)), format="WEBP", quality=90,
         exif=exif_with_orientation(3))
    gray_key = Image.fromarray(pattern(25, 30, 17)).convert("L").quantize(colors=8).convert("L")
    save("gray_key_25x30.png", gray_key, format="PNG", transparency=int(np.asarray(gray_key)[0, 0]))
    graded = Image.fromarray(pattern(30, 26, 18)).quantize(colors=8)
    save("palette_graded_alpha_30x26.png", graded, format="PNG", transparency=bytes([0, 128, 255, 64]))
    # A key of 16-bit samples that are all below 256: PIL compares them with the 8-bit pixels.
    rgb16_keyed = pattern(21, 17, 20).astype(np.uint16) * 257
    rgb16_keyed[:4, :5] = [40 * 257, 60 * 257, 200 * 257]
    rgb16_keyed[5, 5] = [40, 60, 200]
    write_png16("rgb16_key_21x17.png", rgb16_keyed, color_type=2, key=(40, 60, 200))
    gray16 = (pattern(23, 19, 19)[..., 0].astype(np.uint16) * 3)  # partly above 255: PIL clips
    write_png16("gray16_23x19.png", gray16[..., None], color_type=0)
    # Broken or unsupported files for the error tests.
    whole = (IMAGES_DIR / "rgb_37x53.jpg").read_bytes()
    (IMAGES_DIR / "bad_truncated.jpg").write_bytes(whole[: len(whole) // 2])
    (IMAGES_DIR / "bad_empty.png").write_bytes(b"")
    (IMAGES_DIR / "bad_text.jpg").write_bytes(b"this is not an image\n")
    save("bad_unsupported.gif", rgb.convert("P"), format="GIF")


def write_png16(name, array, color_type, key=None):
    """PIL cannot write 16-bit RGB PNG; this writes one by hand (zlib, one IDAT): color_type 2
    for RGB, 0 for gray; `key`, a tRNS transparent colour of 16-bit samples."""
    import struct
    import zlib

    height, width, _ = array.shape
    raw = b"".join(b"\x00" + array[row].astype(">u2").tobytes() for row in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 16, color_type, 0, 0, 0)
    transparency = chunk(b"tRNS", struct.pack(">" + "H" * len(key), *key)) if key else b""
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + transparency + chunk(b"IDAT", zlib.compress(raw, 9)) +
           chunk(b"IEND", b""))
    (IMAGES_DIR / name).write_bytes(png)


def write_decoded_golden(decoded):
    """decoded.npy: every image's RGB pixels as the processor takes them (load_image, then the
    processor's convert_to_rgb, which whitens a kept transparent colour), as rows of (R, G, B)."""
    rows = [convert_to_rgb(image, return_numpy=True).astype(np.float32).reshape(-1, 3) for image in decoded.values()]
    np.save(GOLDENS_DIR / "decoded.npy", np.ascontiguousarray(np.concatenate(rows)))
    golden = {"made_by": "tools/make_image_goldens.py",
              "versions": {"transformers": transformers.__version__, "pillow": PIL.__version__},
              "images": list(decoded), "image_sizes": [list(image.size) for image in decoded.values()]}
    (GOLDENS_DIR / "decoded.json").write_text(json.dumps(golden, indent=1) + "\n")


def image_names():
    return sorted(path.name for path in IMAGES_DIR.iterdir() if not path.name.startswith("bad_"))


def make_goldens():
    GOLDENS_DIR.mkdir(parents=True, exist_ok=True)
    decoded = {name: load_image(str(IMAGES_DIR / name)) for name in image_names()}
    write_decoded_golden(decoded)
    for processor_name, config in PROCESSORS.items():
        names = FEW_IMAGES if processor_name.startswith(("qwen", "idefics3", "gemma4")) else list(decoded)
        images = [decoded[name] for name in names]
        folder = PROCESSORS_DIR / processor_name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "preprocessor_config.json").write_text(json.dumps(config, indent=2) + "\n")
        processor = AutoImageProcessor.from_pretrained(folder)
        if processor_name.startswith("idefics3"):  # all images in one prompt, not one prompt each
            output = processor(images=[images], return_tensors="pt", return_row_col_info=True)
        elif processor_name.startswith("mllama"):
            output = processor(images=[images], return_tensors="pt")
        else:
            output = processor(images=images, return_tensors="pt")
        pixel_values = output["pixel_values"].to(torch.float32).numpy()
        if processor_name == "mllama":  # (prompt, image, tile, C, H, W)
            pixel_values = pixel_values.reshape(-1, int(np.prod(pixel_values.shape[-3:])))
        elif pixel_values.ndim == 3:  # Gemma 4: (image, patch, patch values)
            pixel_values = pixel_values.reshape(-1, pixel_values.shape[-1])
        elif pixel_values.ndim > 3:  # one row per image (or tile) of (C, H, W)
            pixel_values = pixel_values.reshape(-1, int(np.prod(pixel_values.shape[-3:])))
        np.save(GOLDENS_DIR / f"{processor_name}.npy", np.ascontiguousarray(pixel_values))
        golden = {
            "made_by": "tools/make_image_goldens.py",
            "versions": {"transformers": transformers.__version__, "torch": torch.__version__,
                         "torchvision": torchvision.__version__, "pillow": PIL.__version__,
                         "cpu_capability": torch.backends.cpu.get_cpu_capability()},
            "processor_class": type(processor).__name__,
            "images": names,
            "image_sizes": [list(image.size) for image in images],
            "pixel_values_shape": list(output["pixel_values"].shape),
        }
        if "image_grid_thw" in output:
            golden["image_grid_thw"] = output["image_grid_thw"].tolist()
        if "aspect_ratio_ids" in output:
            golden["aspect_ratio_ids"] = output["aspect_ratio_ids"][0].tolist()
            golden["num_tiles"] = output["num_tiles"][0]
        if "aspect_ratios" in output:
            golden["tile_rows_cols"] = output["aspect_ratios"].tolist()
        if "rows" in output:
            golden["tile_rows_cols"] = [list(pair) for pair in zip(output["rows"][0], output["cols"][0])]
        if "image_position_ids" in output:
            golden["image_position_ids"] = output["image_position_ids"].reshape(-1, 2).tolist()
            golden["num_soft_tokens_per_image"] = [int(n) for n in output["num_soft_tokens_per_image"]]
        if "num_crops" in output:
            golden["num_crops"] = output["num_crops"].tolist()
        (GOLDENS_DIR / f"{processor_name}.json").write_text(json.dumps(golden, indent=1) + "\n")
        print(f"{processor_name}: {type(processor).__name__} {list(output['pixel_values'].shape)}")


if __name__ == "__main__":
    make_images()
    make_goldens()
