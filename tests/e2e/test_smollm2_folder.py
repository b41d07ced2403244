"""The SmolLM2-135M-Instruct folder tools/fetch_smollm2.sh makes: its files, config, tokenizer and
tensors against tests/goldens/smollm2.json (made with transformers by tools/make_smollm2_goldens.py)."""
import hashlib
import json

import pytest
from safetensors import safe_open
from tokenizers import Tokenizer

from conftest import REPO_ROOT

MODEL_DIR = REPO_ROOT / "models" / "SmolLM2-135M-Instruct"
GOLDEN = json.loads((REPO_ROOT / "tests" / "goldens" / "smollm2.json").read_text())
FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
         "tokenizer_config.json", "chat_template.jinja")


@pytest.fixture(scope="module")
def model_dir():
    if not (MODEL_DIR / ".canrun-complete").is_file():
        pytest.fail(f"{MODEL_DIR} is missing or incomplete; run tools/fetch_smollm2.sh")
    return MODEL_DIR


def read_json(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_files_exist(model_dir):
    missing = [name for name in FILES if not (model_dir / name).is_file()]
    assert not missing


def test_config_matches_golden(model_dir):
    config = read_json(model_dir / "config.json")
    for key, value in GOLDEN["config"].items():
        assert config.get(key) == value, key


def test_generation_config_matches_golden(model_dir):
    generation = read_json(model_dir / "generation_config.json")
    for key, value in GOLDEN["generation_config"].items():
        assert generation.get(key) == value, key


def test_weights_are_the_goldens(model_dir):
    digest = hashlib.sha256()
    with open(model_dir / "model.safetensors", "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    assert digest.hexdigest() == GOLDEN["source"]["model_safetensors_sha256"]


@pytest.mark.parametrize("prompt", GOLDEN["prompts"], ids=lambda p: p["name"])
def test_tokenizer_matches_golden(model_dir, prompt):
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    assert tokenizer.encode(prompt["text"]).ids == prompt["prompt_ids"]
    assert tokenizer.decode(prompt["generated_ids"], skip_special_tokens=True) == prompt["generated_text"]


def test_tensors_have_llama_names_and_shapes(model_dir):
    config = GOLDEN["config"]
    hidden, inter, head_dim = config["hidden_size"], config["intermediate_size"], config["head_dim"]
    q_rows = config["num_attention_heads"] * head_dim
    kv_rows = config["num_key_value_heads"] * head_dim
    expected = {"model.embed_tokens.weight": [config["vocab_size"], hidden], "model.norm.weight": [hidden]}
    if not config["tie_word_embeddings"]:
        expected["lm_head.weight"] = [config["vocab_size"], hidden]
    for layer in range(config["num_hidden_layers"]):
        prefix = f"model.layers.{layer}."
        expected |= {
            prefix + "input_layernorm.weight": [hidden],
            prefix + "post_attention_layernorm.weight": [hidden],
            prefix + "self_attn.q_proj.weight": [q_rows, hidden],
            prefix + "self_attn.k_proj.weight": [kv_rows, hidden],
            prefix + "self_attn.v_proj.weight": [kv_rows, hidden],
            prefix + "self_attn.o_proj.weight": [hidden, q_rows],
            prefix + "mlp.gate_proj.weight": [inter, hidden],
            prefix + "mlp.up_proj.weight": [inter, hidden],
            prefix + "mlp.down_proj.weight": [hidden, inter],
        }
    with safe_open(model_dir / "model.safetensors", framework="numpy") as f:
        assert f.metadata() == {"format": "pt"}
        assert sorted(f.keys()) == sorted(expected)
        for name, shape in expected.items():
            tensor = f.get_slice(name)
            assert tensor.get_shape() == shape, name
            assert tensor.get_dtype() == "F32", name
