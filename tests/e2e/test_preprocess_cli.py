"""canrun preprocess: a model's image processor on image files, from the command line. The
pixel_values it writes are transformers 5.23.0's (goldens of tools/make_image_goldens.py); bad
images and bad options are one-line errors that name the file or option."""
import json

import numpy as np
import pytest

from conftest import REPO_ROOT

IMAGES = REPO_ROOT / "tests" / "fixtures" / "images"
PROCESSORS = REPO_ROOT / "tests" / "fixtures" / "image_processors"
GOLDENS = REPO_ROOT / "tests" / "goldens" / "images"


@pytest.mark.parametrize("processor", ["qwen2_vl", "siglip", "gemma3_pan_and_scan", "idefics3", "gemma4", "llama4",
                                       "mllama"])
def test_pixel_values_match_transformers(run_canrun, tmp_path, processor):
    golden = json.loads((GOLDENS / f"{processor}.json").read_text())
    images = [arg for name in golden["images"] for arg in ("--image", IMAGES / name)]
    out = tmp_path / "pixel_values.npy"
    result = run_canrun("preprocess", PROCESSORS / processor, *images, "--npy", out, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    expected = np.load(GOLDENS / f"{processor}.npy")
    assert report["pixel_values_shape"] == list(expected.shape)
    assert [image["width"] for image in report["images"]] == [size[0] for size in golden["image_sizes"]]
    if "image_grid_thw" in golden:
        assert [image["grid_thw"] for image in report["images"]] == golden["image_grid_thw"]
    if "num_crops" in golden:
        assert [image["num_crops"] for image in report["images"]] == golden["num_crops"]
    if "num_soft_tokens_per_image" in golden:
        assert [image["num_soft_tokens"] for image in report["images"]] == golden["num_soft_tokens_per_image"]
    if "aspect_ratio_ids" in golden:
        assert [image["aspect_ratio_id"] for image in report["images"]] == golden["aspect_ratio_ids"]
    if "tile_rows_cols" in golden:
        assert [image["tile_rows_cols"] for image in report["images"]] == golden["tile_rows_cols"]
    assert np.abs(np.load(out) - expected).max() <= 1e-5


def test_text_report_names_sizes_and_grids(run_canrun):
    # Grids and tiles are the goldens': tests/goldens/images/qwen3_vl.json and idefics3.json
    result = run_canrun("preprocess", PROCESSORS / "qwen3_vl", "--image", IMAGES / "wide_300x7.png")
    assert result.returncode == 0, result.stderr
    assert "Qwen2VLImageProcessor: pixel_values 40 x 1536" in result.stdout
    assert "wide_300x7.png: 300x7, patch grid (t, h, w) = (1, 2, 20)" in result.stdout
    result = run_canrun("preprocess", PROCESSORS / "idefics3", "--image", IMAGES / "rgb_37x53.jpg")
    assert result.returncode == 0, result.stderr
    assert "Idefics3ImageProcessor: pixel_values 10 x 768" in result.stdout
    assert "rgb_37x53.jpg: 37x53, tiles 3 x 3" in result.stdout


@pytest.mark.parametrize("image, fragment", [
    ("bad_empty.png", "the file is empty"),
    ("bad_truncated.jpg", "Premature end of JPEG file"),
    ("bad_text.jpg", "not a JPEG, PNG or WebP file"),
    ("bad_unsupported.gif", "GIF, BMP and TIFF are not supported"),
    ("missing.png", "cannot open"),
])
def test_bad_images_are_named(run_canrun, image, fragment):
    result = run_canrun("preprocess", PROCESSORS / "siglip", "--image", IMAGES / "rgb_37x53.jpg",
                        "--image", IMAGES / image)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(IMAGES / image) in lines[0] and fragment in lines[0]


def test_pixel_cap_is_an_option(run_canrun):
    result = run_canrun("preprocess", PROCESSORS / "siglip", "--image", IMAGES / "rgb_37x53.jpg",
                        "--max-image-pixels", "1000")
    assert result.returncode != 0
    assert "1961 pixels, above the cap of 1000 (--max-image-pixels)" in result.stderr


def test_a_text_only_model_has_no_image_processor(run_canrun):
    model = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"
    result = run_canrun("preprocess", model, "--image", IMAGES / "rgb_37x53.jpg")
    assert result.returncode != 0
    assert "has no preprocessor_config.json or processor_config.json" in result.stderr


def test_usage_errors(run_canrun):
    assert run_canrun("preprocess", PROCESSORS / "siglip").returncode == 2  # no --image
    result = run_canrun("preprocess", PROCESSORS / "siglip", "--image", IMAGES / "rgb_37x53.jpg",
                        "--max-image-pixels", "0")
    assert result.returncode == 2 and "--max-image-pixels" in result.stderr
