"""`canrun archs`: the supported families, their config options, and catalog coverage."""
import json

from conftest import REPO_ROOT

FAMILIES = ["llama", "mistral", "qwen2", "qwen3", "phi3", "qwen3_moe", "qwen2_moe", "mixtral", "olmoe", "gpt_oss", "gemma",
            "gemma2", "gemma3_text", "gpt2", "gpt_neox", "opt", "phi", "granite", "olmo2", "smollm3",
            "starcoder2", "stablelm", "cohere", "deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_v4",
            "glm_moe_dsa",
            "glm4_moe_lite", "minimax_m2", "lfm2", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_next",
            "nemotron_h", "granitemoehybrid", "llama4_text", "seed_oss", "olmo3",
            "ernie4_5", "exaone4", "ministral3", "hunyuan_v1_dense", "apertus", "ernie4_5_moe",
            "mimo_v2_flash", "glm4_moe", "falcon_h1", "gemma4_text"]


def archs_json(run_canrun, *args):
    result = run_canrun("archs", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def catalog_rows():
    return [json.loads(line) for line in (REPO_ROOT / "data" / "catalog.jsonl").read_text().splitlines()]


def test_table_lists_families_options_and_coverage(run_canrun):
    result = run_canrun("archs")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["ARCH", "CATALOG", "DESCRIPTION"]
    listed = [line.split()[0] for line in lines[1:] if line and not line.startswith(("coverage", " ", "missing"))]
    for family in FAMILIES:
        assert family in listed, family
    phi3 = next(line for line in lines if line.startswith("phi3 "))
    assert "longrope" in phi3
    coverage = next(line for line in lines if line.startswith("coverage: "))
    assert "text-generation models of the catalog that fit trn2 in bf16" in coverage
    by_downloads = next(line for line in lines if line.startswith("by downloads: "))
    assert "downloads of the catalog's text-generation models" in by_downloads
    # Every family of the catalog's text-generation models is supported; image-text-to-text
    # still lists the families it lacks, most downloaded first.
    assert "missing families:" not in result.stdout
    vision = run_canrun("archs", "--task", "image-text-to-text")
    assert vision.returncode == 0, vision.stderr
    assert "missing families:\n  gemma4 (" in vision.stdout


def test_json_counts_add_up_to_the_catalog(run_canrun):
    data = archs_json(run_canrun)
    assert data["task"] == "text-generation" and data["profile"] == "trn2"
    supported = {f["model_type"]: f for f in data["supported"]}
    assert set(FAMILIES) <= set(supported)
    assert all(f["options"] for f in data["supported"])
    covered = sum(f["catalog_models"] for f in data["supported"])
    blocked = sum(m["catalog_models"] for m in data["missing"])
    assert data["coverage"]["covered"] == covered
    assert data["coverage"]["total"] == covered + blocked
    assert abs(data["coverage"]["percent"] - 100 * covered / (covered + blocked)) < 1e-9
    # Only text-generation models are counted, each under its own model_type or, for a
    # model_type canrun does not know, the family of a class its architectures name.
    rows = catalog_rows()
    tasks = {r["id"]: r for r in rows}
    for family in data["supported"] + data["missing"]:
        for model in family["models"]:
            assert tasks[model]["task"] == "text-generation"
            assert (tasks[model]["model_type"] == family["model_type"]
                    or set(tasks[model].get("architectures") or []) & set(family.get("classes", [])))
    # Downloads: every text-generation model counts, fitting or not.
    downloads = [r["popularity"]["downloads"]["count"] or 0 for r in rows if r["task"] == "text-generation"]
    assert data["coverage"]["total_downloads"] == sum(downloads)
    counted = sum(f["catalog_downloads"] for f in data["supported"] + data["missing"])
    assert counted == sum(downloads)
    assert data["coverage"]["covered_downloads"] == sum(f["catalog_downloads"] for f in data["supported"])
    assert data["coverage"]["downloads_percent"] >= 98.0
    # Kimi-K2's model_type kimi_k2 names DeepseekV3ForCausalLM: it counts as deepseek_v3.
    assert "kimi_k2" not in {m["model_type"] for m in data["missing"]}
    assert not set(supported) & {m["model_type"] for m in data["missing"]}
    # Small supported models are counted; the 405B Llama does not fit 16 x 24 GiB.
    assert "Qwen/Qwen3-0.6B" in supported["qwen3"]["models"]
    assert "meta-llama/Llama-3.1-405B-Instruct" not in supported["llama"]["models"]


def test_other_task_and_bad_profile(run_canrun):
    vision = archs_json(run_canrun, "--task", "image-text-to-text")
    # Qwen3-VL (the task's most downloaded family), Qwen3.5, Qwen3.5-MoE, Qwen2.5-VL and Qwen2-VL
    # read images: 90% of the task's downloads; every catalog config of theirs loads.
    supported = {f["model_type"]: f["catalog_models"] for f in vision["supported"] if f["catalog_models"]}
    assert supported == {"qwen3_vl": 4, "qwen3_5": 3, "qwen3_5_moe": 3, "qwen2_5_vl": 2, "qwen2_vl": 1}
    assert vision["coverage"]["loadable"] == vision["coverage"]["covered"] == 13
    assert vision["coverage"]["downloads_percent"] >= 90
    result = run_canrun("archs", "--profile", "nope")
    assert result.returncode != 0 and "nope" in result.stderr


ENCODER_TASKS = ["sentence-similarity", "feature-extraction", "text-ranking", "text-classification"]


def test_encoder_tasks_count_the_families_that_run_as_encoders(run_canrun):
    data = archs_json(run_canrun)
    by_task = {c["task"]: c for c in data["encoder_tasks"]}
    assert list(by_task) == ENCODER_TASKS + ["encoder tasks"]
    rows = [r for r in catalog_rows() if r["task"] in ENCODER_TASKS]
    listed = run_canrun("catalog", "--json")
    assert listed.returncode == 0, listed.stderr
    # The registry decides (catalog --json's family_supported), task by task and for all of them.
    supported = {e["id"] for e in json.loads(listed.stdout) if e["task"] in ENCODER_TASKS and e["family_supported"]}
    assert "sentence-transformers/all-MiniLM-L6-v2" in supported
    for task in ENCODER_TASKS + ["encoder tasks"]:
        counted = [r for r in rows if task in (r["task"], "encoder tasks")]
        known = [r for r in counted if r["model_type"]]
        coverage = by_task[task]
        assert coverage["records"] == len(counted), task
        assert coverage["known_model_type"] == len(known), task
        assert coverage["supported"] == sum(r["id"] in supported for r in known), task
        downloads = lambda r: r["popularity"]["downloads"]["count"] or 0
        assert coverage["known_downloads"] == sum(map(downloads, known)), task
        assert coverage["supported_downloads"] == sum(downloads(r) for r in known if r["id"] in supported), task
    assert 0 < by_task["encoder tasks"]["supported"] < by_task["encoder tasks"]["known_model_type"]
    # The table says the same for each task, after the text-generation lines.
    result = run_canrun("archs", "--task", "text-ranking")
    assert result.returncode == 0, result.stderr
    ranking = by_task["text-ranking"]
    line = next(l for l in result.stdout.splitlines() if l.startswith("  text-ranking: "))
    assert line.startswith(f"  text-ranking: {ranking['supported']} / {ranking['known_model_type']} (")
    # With an encoder task, a family's models are those it runs as an encoder.
    similarity = archs_json(run_canrun, "--task", "sentence-similarity")
    bert = next(f for f in similarity["supported"] if f["model_type"] == "bert")
    assert "sentence-transformers/all-MiniLM-L6-v2" in bert["models"]
    for family in similarity["supported"]:
        assert set(family["models"]) <= supported, family["model_type"]
