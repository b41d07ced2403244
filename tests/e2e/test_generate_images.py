"""canrun generate with images: an image-text-to-text model (the tiny Qwen3-VL fixture) reads the
prompt's images, from --image or from the image blocks of --messages, rendered through its chat
template and expanded into image tokens as transformers' processor does; it generates what
transformers 5.23.0 generates (goldens of tools/make_multimodal_fixtures.py). Bad images and
images where none belong are one-line errors naming the file or option."""
import json

import pytest

from conftest import REPO_ROOT

MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3_vl"
IMAGES = REPO_ROOT / "tests" / "fixtures" / "images"
GOLDEN = json.loads((REPO_ROOT / "tests" / "goldens" / "multimodal" / "qwen3_vl.json").read_text())


def generated(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_image_and_prompt_generate_what_transformers_generates(run_canrun, backend):
    case = GOLDEN["cases"][0]
    [image] = case["images"]
    text = case["messages"][0]["content"][1]["text"]
    out = generated(run_canrun("generate", MODEL, "--image", IMAGES / image, "--prompt", text, "--backend", backend,
                               "--json"))
    assert out["prompt"] == case["rendered"]
    assert out["prompt_ids"] == case["prompt_ids"]
    assert out["generated_ids"] == case["generated_ids"]
    assert out["timings"]["vision_s"] > 0


def test_messages_with_image_blocks(run_canrun, tmp_path):
    case = GOLDEN["cases"][1]
    messages = json.loads(json.dumps(case["messages"]))
    # One block as transformers takes it, the other as OpenAI's API sends it.
    first, _, second, _ = messages[0]["content"]
    first["image"] = str(IMAGES / first["image"])
    second.clear()
    second.update({"type": "image_url", "image_url": {"url": "file://" + str(IMAGES / case["images"][1])}})
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    out = generated(run_canrun("generate", MODEL, "--messages", path, "--json"))
    assert out["prompt_ids"] == case["prompt_ids"]
    assert out["generated_ids"] == case["generated_ids"]


def test_a_text_prompt_to_the_same_checkpoint(run_canrun):
    case = GOLDEN["cases"][2]
    out = generated(run_canrun("generate", MODEL, "--user", case["messages"][0]["content"], "--json"))
    assert out["prompt_ids"] == case["prompt_ids"]
    assert out["generated_ids"] == case["generated_ids"]
    assert out["timings"]["vision_s"] is None


@pytest.mark.parametrize("image, message", [
    ("bad_truncated.jpg", "bad_truncated.jpg"),
    ("bad_empty.png", "bad_empty.png"),
    ("bad_unsupported.gif", "bad_unsupported.gif"),
])
def test_bad_images_are_named(run_canrun, image, message):
    result = run_canrun("generate", MODEL, "--image", IMAGES / image, "--prompt", "What is it?")
    assert result.returncode != 0
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_an_image_over_the_pixel_cap(run_canrun):
    result = run_canrun("generate", MODEL, "--image", IMAGES / "rgb_37x53.jpg", "--max-image-pixels", "1000",
                        "--prompt", "What is it?")
    assert result.returncode != 0
    assert "rgb_37x53.jpg" in result.stderr and "1000" in result.stderr, result.stderr


def test_an_image_to_a_text_model(run_canrun):
    model = REPO_ROOT / "tests" / "fixtures" / "models" / "qwen3"
    result = run_canrun("generate", model, "--image", IMAGES / "rgb_37x53.jpg", "--prompt", "What is it?")
    assert result.returncode != 0
    assert "--image" in result.stderr and "text model" in result.stderr, result.stderr


def test_placeholders_without_images(run_canrun, tmp_path):
    # The template renders one placeholder per image block; an image block naming no file is refused,
    # and a prompt holding the placeholder token itself but no image is too.
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is it?"}]}]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    result = run_canrun("generate", MODEL, "--messages", path)
    assert result.returncode != 0
    assert "content block 0" in result.stderr, result.stderr
    result = run_canrun("generate", MODEL, "--prompt", "<|vision_start|><|image_pad|><|vision_end|>What is it?")
    assert result.returncode != 0
    assert "1 image placeholder and there are 0 images" in result.stderr, result.stderr
