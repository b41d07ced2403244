"""Makes the tiny random vision-language checkpoints in tests/fixtures/models and their goldens.

Each fixture is a Hub-style image-text-to-text folder written by transformers' own
save_pretrained: a text model of hidden 64 under M-RoPE, a vision tower of patch 8 whose 2 x 2
patches merge into one text position, a GPT-2-style tokenizer from tools/tokenizer_styles.py
with Qwen's chat and vision special tokens, the Qwen3.5 chat template, and the image and video
processor configs, scaled down to the 8-pixel patches. The Qwen3 towers (3 blocks) add a 4x4
learned position grid that each image's grid resamples bilinearly; the Qwen2 towers have none.
  qwen3_vl     Qwen3VLForConditionalGeneration: 3 Qwen3 layers under interleaved M-RoPE,
               deepstack mergers after vision blocks 0 and 2 added to the first two layers' inputs
  qwen3_5      Qwen3_5ForConditionalGeneration: tools/make_fixtures.py's qwen3_5_text layers
               (Gated DeltaNet 0-2, gated full attention 3, zero-centred RMSNorms) with heads
               of 32 rotating half their width, and the vision tower without DeepStack
  qwen3_5_moe  Qwen3_5MoeForConditionalGeneration: qwen3_5_moe_text's layers (alternating,
               4 experts top-2 and a gated shared expert) with qwen3_5's heads and tower
  qwen2_vl     Qwen2VLForConditionalGeneration: 3 Qwen2 layers (q/k/v biases) under contiguous
               M-RoPE, a 3-block LayerNorm tower (width 32, quick_gelu MLP) and its LayerNorm merger
  qwen2_5_vl   Qwen2_5_VLForConditionalGeneration: qwen2_vl's text model, a 4-block RMSNorm tower
               (SwiGLU MLPs with biases) whose blocks 0 and 2 attend within windows of 2 x 2
               merged patches and blocks 1 and 3 over the whole image; its checkpoint is checked
               to hold the transformers 4.x names the Hub's Qwen2.5-VL checkpoints have (model.X
               for model.language_model.X, visual.X for model.visual.X), which save_pretrained
               also gives qwen2_vl's, and to load under them to the same logits

Its golden, tests/goldens/multimodal/<name>.json, records for a prompt with one image, one with
two images and a text-only one: the messages, the rendered prompt (before the image
placeholders are expanded), the processor's prompt ids and image grids, the M-RoPE position
ids and rope delta, the merged vision features and deepstack features fed to the text model
(none but for Qwen3-VL), the 32-token greedy generation of `model.generate` and the float32 logits
of the last prompt position. Computed as tools/make_fixtures.py computes its goldens: float32,
CPU, eager attention, checked against sdpa and a cache-free greedy loop, and rejected when a
step's top-1/top-2 logit gap falls below MIN_TOP2_GAP (change the fixture's seed then).

Run with the tools venv (tools/requirements-tools.txt), from the repository root:
    python tools/make_multimodal_fixtures.py                 # all fixtures
    python tools/make_multimodal_fixtures.py --only qwen3_5
"""
import argparse
import shutil
import sys
from dataclasses import dataclass

import numpy as np
import torch
import transformers
from tokenizers import AddedToken, Tokenizer
from safetensors.torch import load_file, save_file
from transformers import (AutoProcessor, GenerationConfig, Qwen2_5_VLConfig,
                          Qwen2_5_VLForConditionalGeneration, Qwen2VLConfig,
                          Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor, Qwen3_5Config,
                          Qwen3_5ForConditionalGeneration, Qwen3_5MoeConfig,
                          Qwen3_5MoeForConditionalGeneration, Qwen3VLConfig,
                          Qwen3VLForConditionalGeneration)
from transformers.image_utils import load_image
from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor
from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor
from transformers.vision_utils import get_vision_window_index

from make_fixtures import (EMBED_STD, FIXTURES_DIR, MAX_NEW_TOKENS, MIN_TOP2_GAP, NORM_LIKE,
                           PLAIN_NORMS, QWEN3_5_MOE_TEXT, QWEN3_5_TEXT, ROOT, UNIT_OFFSET_NORMS,
                           float32_list, golden_json, randomize_, write_json)
from tokenizer_styles import build_tokenizer

IMAGES_DIR = ROOT / "tests" / "fixtures" / "images"
GOLDENS_DIR = ROOT / "tests" / "goldens" / "multimodal"
# Qwen's chat layout with its image placeholder, as Qwen2-VL's and Qwen3-VL's templates render
# image blocks (transformers' {"type": "image"} and OpenAI's image_url alike).
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' }}"
    "{%- if message.content is string %}{{- message.content }}"
    "{%- else %}{%- for item in message.content %}"
    "{%- if item.type == 'image' or 'image' in item or 'image_url' in item %}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif item.type == 'text' %}{{- item.text }}{%- endif %}"
    "{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# The gpt2 style already has <|endoftext|>, <|im_start|> and <|im_end|>; these follow them.
VISION_TOKENS = ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")

QWEN3_VL_TEXT = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6, max_position_embeddings=256,
                     # Interleaved M-RoPE over the 8 frequencies of head_dim 16: frequency i rotates by
                     # the height position when i % 3 == 1 and i < 3 * 2, by the width position when
                     # i % 3 == 2 and i < 3 * 2, else by the temporal one (0, 3, 6, 7), as [24, 20, 20]
                     # splits Qwen3-VL's 64.
                     rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                      "mrope_section": [4, 2, 2], "mrope_interleaved": True})
QWEN3_VL_VISION = dict(depth=3, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=8,
                       temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=64,
                       num_position_embeddings=16, deepstack_visual_indexes=[0, 2],
                       hidden_act="gelu_pytorch_tanh")


def qwen3_5_text(text):
    """make_fixtures' Qwen3.5 text config as a text_config. Its heads of 16 rotate a quarter
    (2 frequencies), too few for three axes; heads of 32 rotating half give 8 frequencies,
    split [4, 2, 2] as in qwen3_vl: height at 1 and 4, width at 2 and 5, time at 0, 3, 6, 7
    (Qwen3.5's rotary embedding always interleaves: frequency i < 3 * section rotates by the
    height when i % 3 == 1, by the width when i % 3 == 2)."""
    text = {k: v for k, v in text.items() if k != "model_type"}
    rope = dict(text["rope_parameters"], partial_rotary_factor=0.5, mrope_section=[4, 2, 2],
                mrope_interleaved=True)
    return dict(text, head_dim=32, max_position_embeddings=256, rope_parameters=rope)


# Qwen3.5's tower is Qwen3-VL's without the deepstack mergers; heads of 8 keep the folders small.
QWEN3_5_VISION = dict(depth=3, hidden_size=16, intermediate_size=32, num_heads=2, patch_size=8,
                      temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=64,
                      num_position_embeddings=16, hidden_act="gelu_pytorch_tanh")


# Qwen2-VL's text model: Qwen2 layers (q/k/v biases, head_dim = hidden / heads) under M-RoPE
# whose sections are contiguous: of the 8 frequencies of head_dim 16, 0-1 rotate by the temporal
# position, 2-4 by the height, 5-7 by the width, as [16, 24, 24] splits Qwen2-VL's 64.
QWEN2_VL_TEXT = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                     num_key_value_heads=2, rms_norm_eps=1e-6, max_position_embeddings=256,
                     rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                      "mrope_section": [2, 3, 3]})
# Qwen2-VL's tower: embed_dim is its width, hidden_size the merger's output (the text width).
QWEN2_VL_VISION = dict(depth=3, embed_dim=32, hidden_size=64, num_heads=2, mlp_ratio=2, patch_size=8,
                       temporal_patch_size=2, spatial_merge_size=2, hidden_act="quick_gelu")
# Qwen2.5-VL's tower: windows of window_size pixels, 32 // 2 // 8 = 2 merged patches a side, so
# the test images' merged grids (3x2, 3x3, 2x3) split into 2 to 4 windows in blocks 0 and 2.
QWEN2_5_VL_VISION = dict(depth=4, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=8,
                         temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=64,
                         window_size=32, fullatt_block_indexes=[1, 3], hidden_act="silu")


@dataclass
class Fixture:
    name: str
    config_class: type
    model_class: type
    text: dict    # text_config kwargs; vocab_size is the tokenizer's
    vision: dict  # vision_config kwargs
    seed: int
    processor: str = "Qwen3VLProcessor"  # the class AutoProcessor picks from the model_type
    video_processor_class: type = Qwen3VLVideoProcessor
    hub_layout: bool = False  # rewrite the checkpoint with the transformers 4.x tensor names


FIXTURES = [
    Fixture("qwen3_vl", Qwen3VLConfig, Qwen3VLForConditionalGeneration, QWEN3_VL_TEXT, QWEN3_VL_VISION,
            seed=607),
    Fixture("qwen3_5", Qwen3_5Config, Qwen3_5ForConditionalGeneration, qwen3_5_text(QWEN3_5_TEXT),
            QWEN3_5_VISION, seed=648),
    Fixture("qwen3_5_moe", Qwen3_5MoeConfig, Qwen3_5MoeForConditionalGeneration,
            qwen3_5_text(QWEN3_5_MOE_TEXT), QWEN3_5_VISION, seed=629),
    Fixture("qwen2_vl", Qwen2VLConfig, Qwen2VLForConditionalGeneration, QWEN2_VL_TEXT, QWEN2_VL_VISION,
            seed=610, processor="Qwen2VLProcessor", video_processor_class=Qwen2VLVideoProcessor),
    Fixture("qwen2_5_vl", Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, QWEN2_VL_TEXT,
            QWEN2_5_VL_VISION, seed=607, processor="Qwen2_5_VLProcessor",
            video_processor_class=Qwen2VLVideoProcessor, hub_layout=True),
]

# Qwen3-VL's published processor configs with 8-pixel patches (the video pixel bounds scaled
# by the patch area, 1/4); the image bounds give these images grids of 4 to 6 patches a side.
IMAGE_PROCESSOR = dict(do_resize=True, resample=3, do_rescale=True, rescale_factor=1 / 255,
                       do_normalize=True, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
                       do_convert_rgb=True, size={"shortest_edge": 1024, "longest_edge": 16384},
                       patch_size=8, temporal_patch_size=2, merge_size=2)
VIDEO_PROCESSOR = dict(IMAGE_PROCESSOR, size={"shortest_edge": 32768, "longest_edge": 196608})

# (messages, image files in order of appearance); image parts name a file in IMAGES_DIR.
CASES = (
    [{"role": "user", "content": [{"type": "image", "image": "rgb_37x53.jpg"},
                                  {"type": "text", "text": "Describe this image."}]}],
    [{"role": "user", "content": [{"type": "image", "image": "palette_45x45.png"},
                                  {"type": "text", "text": " and "},
                                  {"type": "image", "image": "lossy_41x27.webp"},
                                  {"type": "text", "text": " Which is brighter?"}]}],
    [{"role": "user", "content": "Hello world"}],
)
# Case 0 again with another picture: the image's content, not only its tokens, must matter.
OTHER_IMAGE = "palette_45x45.png"


def image_files(messages):
    return [part["image"] for m in messages if isinstance(m["content"], list)
            for part in m["content"] if part["type"] == "image"]


def write_tokenizer(fx, folder):
    tok = build_tokenizer("gpt2")
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in VISION_TOKENS])
    tok.save(str(folder / "tokenizer.json"))
    write_json(folder / "tokenizer_config.json", {
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": None, "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>", "model_max_length": fx.text["max_position_embeddings"],
        "clean_up_tokenization_spaces": False})
    return tok


def shift_zero_centred_norms_(text_model):
    """Lowers by 1 the norm weights randomize_ would have lowered had the text model been
    randomized alone: its RMSNorms multiply by (1 + w), but randomize_ decides from the top-level
    model_type, which is the composite's. The result equals randomize_'s own shifted draw."""
    zero_centred = {f"{name}.weight" for name, m in text_model.named_modules()
                    if type(m).__name__.endswith("RMSNorm")}
    shifted = set()
    with torch.no_grad():
        for name, p in text_model.named_parameters():
            per_head_norm = name.endswith(("q_norm.weight", "k_norm.weight"))
            norm_like = ("norm" in name or ".ln_" in name or name.endswith(NORM_LIKE)) and not name.endswith(".bias")
            if (p.dim() == 1 or per_head_norm) and norm_like and not name.endswith(PLAIN_NORMS):
                p.sub_(1.0)
                shifted.add(name)
    assert shifted == zero_centred, f"shifted {sorted(shifted ^ zero_centred)} against the module types"


def randomize_vision_language_(model, seed):
    """randomize_, the text model's (1 + w) norms lowered by 1 as randomize_ lowers them in a
    text-only fixture, then the vision tower's learned position grid (where it has one) at the
    embedding spread.

    randomize_ gives pos_embed (an nn.Embedding its name rules do not list) WEIGHT_STD, a tenth
    of the patch embeddings (0.3 * sqrt(3*2*8*8) times the pixels), so the resampled grid would
    barely move the features; EMBED_STD gives it a third. The tower's LayerNorms keep plain
    weights: randomize_ shifts nothing in a model whose top-level model_type is not listed."""
    assert model.config.model_type not in UNIT_OFFSET_NORMS
    randomize_(model, seed)
    if model.config.text_config.model_type in UNIT_OFFSET_NORMS:
        shift_zero_centred_norms_(model.model.language_model)
    if not hasattr(model.model.visual, "pos_embed"):
        return
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        weight = model.model.visual.pos_embed.weight
        weight.copy_(EMBED_STD * torch.randn(weight.shape, generator=gen))


def make_fixture(fx, folder, seed):
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    tok = write_tokenizer(fx, folder)
    ids = {t: tok.token_to_id(t) for t in ("<|endoftext|>", "<|im_end|>") + VISION_TOKENS}
    config = fx.config_class(
        text_config=dict(fx.text, vocab_size=tok.get_vocab_size()), vision_config=fx.vision,
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False)
    # Qwen2-VL's text configs default their bos/eos to Qwen's vocabulary (151643 <|endoftext|>,
    # 151645 <|im_end|>): the same tokens of this one.
    for key, token in (("bos_token_id", "<|endoftext|>"), ("eos_token_id", "<|im_end|>")):
        if (getattr(config.text_config, key, None) or 0) >= tok.get_vocab_size():
            setattr(config.text_config, key, ids[token])
    torch.manual_seed(seed)  # seeds the init's draws too, though randomize_ replaces them
    model = fx.model_class(config).to(torch.float32)
    randomize_vision_language_(model, seed)
    model.generation_config = GenerationConfig(
        bos_token_id=ids["<|endoftext|>"], pad_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]])
    model.save_pretrained(folder)
    assert "lm_head.weight" in model.state_dict() and not model.config.tie_word_embeddings
    Qwen2VLImageProcessor(**IMAGE_PROCESSOR).save_pretrained(folder)
    fx.video_processor_class(**VIDEO_PROCESSOR).save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    if fx.hub_layout:
        rewrite_hub_layout(fx, folder)


def hub_name(name):
    """A tensor name in the layout transformers 4.x saved and the Hub's Qwen2.5-VL checkpoints
    have: model.X for the text model's model.language_model.X, visual.X for model.visual.X."""
    if name.startswith("model.language_model."):
        return "model." + name[len("model.language_model."):]
    if name.startswith("model.visual."):
        return name[len("model."):]
    assert name == "lm_head.weight" or name.startswith(("model.", "visual.")), name
    return name


def rewrite_hub_layout(fx, folder):
    """Writes the saved tensors under their 4.x names (transformers 5.23's save_pretrained already
    reverts its own renaming to them), sorted by name with the metadata of save_pretrained's
    file, and checks that transformers loads the folder, converting the old names, to the same
    tensors and the same logits as the model it saved."""
    processor = AutoProcessor.from_pretrained(folder)
    saved = load(fx, folder, "eager")
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    renamed = {hub_name(name): t for name, t in tensors.items()}
    assert len(renamed) == len(tensors)
    assert not any(name.startswith(("model.language_model.", "model.visual.")) for name in renamed)
    save_file({name: renamed[name] for name in sorted(renamed)}, str(path), metadata={"format": "pt"})
    model, info = fx.model_class.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager",
                                                 output_loading_info=True)
    model.eval()
    assert not any(info.get(k) for k in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    expected, loaded = saved.state_dict(), model.state_dict()
    assert expected.keys() == loaded.keys()
    for name, t in expected.items():
        assert t.dtype == loaded[name].dtype == torch.float32 and torch.equal(t, loaded[name]), name
    with torch.no_grad():
        for messages in CASES:
            inputs = prepare(processor, messages)[1]
            saved.model.rope_deltas = model.model.rope_deltas = None
            assert torch.equal(saved(**inputs).logits, model(**inputs).logits), messages


def load(fx, folder, attn):
    model = fx.model_class.from_pretrained(folder, dtype=torch.float32, attn_implementation=attn)
    return model.eval()


def greedy(model, inputs):
    """model.generate, greedy; returns the new ids and each step's logits."""
    model.model.rope_deltas = None
    out = model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                         return_dict_in_generate=True, output_logits=True)
    new_ids = out.sequences[0, inputs["input_ids"].shape[1]:].tolist()
    return new_ids, torch.stack([step[0] for step in out.logits])


def greedy_without_cache(model, inputs, eos_ids):
    """The same greedy decode recomputing the whole sequence (vision tower, M-RoPE positions
    and all) each step: no KV cache, recurrent state or stored rope delta."""
    kwargs = {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask", "mm_token_type_ids")}
    seq, new_ids = inputs["input_ids"][0].tolist(), []
    types = inputs["mm_token_type_ids"][0].tolist()
    while len(new_ids) < MAX_NEW_TOKENS:
        model.model.rope_deltas = None
        ids = torch.tensor([seq])
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                       mm_token_type_ids=torch.tensor([types]), use_cache=False, **kwargs).logits[0, -1]
        token = int(logits.argmax())
        seq.append(token)
        types.append(0)
        new_ids.append(token)
        if token in eos_ids:
            break
    return new_ids


def expand_placeholders(rendered, grid_thw, image_token, merge_size):
    """The rendered prompt with each image's placeholder repeated once per merged patch."""
    parts = rendered.split(image_token)
    assert len(parts) == len(grid_thw) + 1
    text = parts[0]
    for grid, part in zip(grid_thw, parts[1:]):
        text += image_token * (int(np.prod(grid)) // merge_size**2) + part
    return text


def prepare(processor, messages):
    rendered = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    images = [load_image(str(IMAGES_DIR / name)) for name in image_files(messages)]
    inputs = processor(text=[rendered], images=images or None, return_tensors="pt")
    return rendered, inputs


def compute_golden(fx, folder):
    processor = AutoProcessor.from_pretrained(folder)
    assert type(processor).__name__ == fx.processor, type(processor)
    assert processor.image_processor.patch_size == fx.vision["patch_size"]
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    eager, sdpa = load(fx, folder, "eager"), load(fx, folder, "sdpa")
    eos_ids = eager.generation_config.eos_token_id
    image_token = processor.image_token
    golden_cases = []
    with torch.no_grad():
        for messages in CASES:
            rendered, inputs = prepare(processor, messages)
            ids = inputs["input_ids"][0].tolist()
            grid = inputs["image_grid_thw"].tolist() if "image_grid_thw" in inputs else []
            # canrun tokenizes with tokenizer.json: the expanded prompt must give the same ids.
            expanded = expand_placeholders(rendered, grid, image_token, processor.image_processor.merge_size)
            assert tok.encode(expanded, add_special_tokens=True).ids == ids, f"{rendered!r}: tokenizer.json differs"

            new_ids, logits = greedy(eager, inputs)
            sdpa_ids, sdpa_logits = greedy(sdpa, inputs)
            assert sdpa_ids == new_ids, f"{rendered!r}: sdpa {sdpa_ids} != eager {new_ids}"
            assert torch.allclose(sdpa_logits[0], logits[0], rtol=0, atol=1e-4), rendered
            no_cache = greedy_without_cache(eager, inputs, eos_ids)
            assert no_cache == new_ids, f"{rendered!r}: no-cache {no_cache} != {new_ids}"

            position_ids, rope_delta = eager.model.get_rope_index(
                inputs["input_ids"], mm_token_type_ids=inputs["mm_token_type_ids"],
                image_grid_thw=inputs.get("image_grid_thw"), attention_mask=inputs["attention_mask"])
            top2 = logits.topk(2, dim=-1).values
            case = {
                "messages": messages,
                "images": image_files(messages),
                "rendered": rendered,
                "prompt_ids": ids,
                "image_grid_thw": grid,
                "position_ids": position_ids[:, 0].tolist(),
                "rope_delta": int(rope_delta[0, 0]),
                "generated_ids": new_ids,
                "min_top2_gap": float(str(np.float32((top2[:, 0] - top2[:, 1]).min()))),
                "last_logits": float32_list(logits[0]),
            }
            if grid:
                features = eager.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"])
                sdpa_features = sdpa.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"])
                embeds = torch.cat(features.pooler_output)
                assert torch.allclose(torch.cat(sdpa_features.pooler_output), embeds, rtol=0, atol=1e-4)
                case["image_embeds"] = float32_list(embeds.flatten())
                # Qwen3.5's tower has no deepstack mergers: its output has no deepstack_features.
                deepstack = getattr(features, "deepstack_features", None) or []
                assert len(deepstack) == len(fx.vision.get("deepstack_visual_indexes", []))
                case["deepstack_embeds"] = [float32_list(torch.cat(f).flatten()) for f in deepstack]
                case["pixel_values_sum"] = float(inputs["pixel_values"].double().sum())
                if "fullatt_block_indexes" in fx.vision:
                    check_windows_matter(eager, inputs, embeds)
                check_images_matter(eager, processor, messages, inputs, new_ids)
            golden_cases.append(case)
    return golden_cases


def check_windows_matter(model, inputs, embeds):
    """Every image of a windowed tower splits into several windows, and attending over the whole
    image in every block instead gives other features."""
    visual = model.model.visual
    for grid in inputs["image_grid_thw"]:
        _, cu_window_seqlens = get_vision_window_index(grid[None], visual.spatial_merge_size,
                                                       visual.window_size, visual.patch_size)
        assert len(cu_window_seqlens) > 2, f"image grid {grid.tolist()} fits in one window"
    windowed = visual.fullatt_block_indexes
    visual.fullatt_block_indexes = list(range(len(visual.blocks)))
    try:
        full = torch.cat(model.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"]).pooler_output)
    finally:
        visual.fullatt_block_indexes = windowed
    assert (full - embeds).abs().max() > 1e-2, "window attention does not change the features"


def check_images_matter(model, processor, messages, inputs, new_ids):
    """The same prompt ids without the vision features (the placeholders' own embeddings, plain
    positions), and the first case with another picture, must generate other ids."""
    text_only, _ = greedy(model, {"input_ids": inputs["input_ids"], "attention_mask": inputs["attention_mask"]})
    assert text_only != new_ids, "the generation does not depend on the image features"
    print(f"  without vision features: {text_only}")
    if messages is CASES[0]:
        other = [dict(m, content=[dict(p, image=OTHER_IMAGE) if p["type"] == "image" else p
                                  for p in m["content"]]) for m in messages]
        other_ids, _ = greedy(model, prepare(processor, other)[1])
        assert other_ids != new_ids, "the generation does not depend on the picture"
        print(f"  with {OTHER_IMAGE}: {other_ids}")


def config_summary(fx, folder):
    config = fx.config_class.from_pretrained(folder)
    text, vision = config.text_config, config.vision_config
    return {
        "text": {k: getattr(text, k) for k in list(fx.text) + ["vocab_size"]},
        "vision": {k: getattr(vision, k) for k in fx.vision},
        "tie_word_embeddings": config.tie_word_embeddings,
        "image_token_id": config.image_token_id, "video_token_id": config.video_token_id,
        "vision_start_token_id": config.vision_start_token_id,
        "vision_end_token_id": config.vision_end_token_id,
    }


def build(fx, seed):
    folder = FIXTURES_DIR / fx.name
    make_fixture(fx, folder, seed)
    golden_cases = compute_golden(fx, folder)
    min_gap = min(c["min_top2_gap"] for c in golden_cases)
    print(f"{fx.name}: seed {seed}, min_top2_gap per case {[c['min_top2_gap'] for c in golden_cases]}")
    if min_gap < MIN_TOP2_GAP:
        raise RuntimeError(f"{fx.name}: top-1/top-2 logit gap {min_gap:.2e} < {MIN_TOP2_GAP}; change its seed")
    golden = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "fixture": fx.name,
        "config": config_summary(fx, folder),
        "min_top2_gap": min_gap,
        "cases": golden_cases,
    }
    GOLDENS_DIR.mkdir(parents=True, exist_ok=True)
    path = GOLDENS_DIR / f"{fx.name}.json"
    path.write_text(golden_json(golden), encoding="utf-8")
    size = sum(f.stat().st_size for f in folder.iterdir())
    print(f"{fx.name}: fixture {size / 1024:.0f} KiB, golden {path.stat().st_size / 1024:.0f} KiB, "
          f"generated {[len(c['generated_ids']) for c in golden_cases]}")


def main():
    names = [fx.name for fx in FIXTURES]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=names, metavar="NAME",
                        help=f"build only this fixture (repeatable); one of {', '.join(names)}")
    parser.add_argument("--seed", type=int,
                        help="weight seed instead of the fixture's own (with a single --only)")
    args = parser.parse_args()
    if args.seed is not None and (not args.only or len(args.only) != 1):
        parser.error("--seed needs exactly one --only")
    # One thread keeps float32 reductions in a fixed order, so reruns write identical files.
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    for fx in FIXTURES:
        if not args.only or fx.name in args.only:
            build(fx, fx.seed if args.seed is None else args.seed)


if __name__ == "__main__":
    sys.exit(main())
