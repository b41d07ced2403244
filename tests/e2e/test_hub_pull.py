"""`canrun pull` and Hub ids against a local fake Hub (fake_hub.py): the cache is laid out as
huggingface_hub lays it out (huggingface_hub 2.4.0 finds what canrun fetched, and canrun uses
what huggingface_hub fetched), downloads resume and are checked, and every bad input is one line
naming what is wrong with no file left under a final name."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from fake_hub import FakeHub, Repo

MODEL_DIR = REPO_ROOT / "tests" / "fixtures" / "models" / "llama_f32"
REPO_ID = "tiny-org/tiny-llama"
GATED_ID = "tiny-org/gated-llama"
TOKEN = "hf_test_token"


def model_files():
    files = {p.name: p.read_bytes() for p in MODEL_DIR.iterdir() if p.is_file()}
    files["README.md"] = b"# tiny llama\n"  # not something canrun reads: not fetched by default
    return files


@pytest.fixture
def hub():
    files = model_files()
    repos = {REPO_ID: Repo(files, branches={"v1": "2" * 40}), GATED_ID: Repo(files, commit="1" * 40, token=TOKEN)}
    with FakeHub(repos) as server:
        yield server


@pytest.fixture
def env(hub, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.url, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HOME=str(tmp_path / "home"))
    return env


def canrun(canrun_bin, env, *args):
    return subprocess.run([canrun_bin, *map(str, args)], capture_output=True, text=True, env=env, timeout=120)


def blobs(env):
    return sorted((Path(env["HF_HUB_CACHE"]) / "models--tiny-org--tiny-llama" / "blobs").iterdir())


def test_pull_lays_out_the_cache_as_huggingface_hub_does(canrun_bin, hub, env):
    pulled = canrun(canrun_bin, env, "pull", REPO_ID)
    assert pulled.returncode == 0, pulled.stderr
    snapshot = Path(pulled.stdout.strip())
    commit = hub.repos[REPO_ID].commit
    repo_dir = Path(env["HF_HUB_CACHE"]) / "models--tiny-org--tiny-llama"
    assert snapshot == repo_dir / "snapshots" / commit
    assert (repo_dir / "refs" / "main").read_text() == commit
    names = {p.name for p in snapshot.iterdir()}
    assert names == {p.name for p in MODEL_DIR.iterdir()}  # README.md is not what canrun reads
    for link in snapshot.iterdir():
        assert link.is_symlink() and not os.path.isabs(os.readlink(link))
        assert link.read_bytes() == (MODEL_DIR / link.name).read_bytes()
        assert link.resolve().name == hub.repos[REPO_ID].etag(link.name)
    assert f"{REPO_ID}: 6 files (6 fetched" in pulled.stderr or "files (" in pulled.stderr

    from huggingface_hub import hf_hub_download, snapshot_download
    found = snapshot_download(REPO_ID, cache_dir=env["HF_HUB_CACHE"], local_files_only=True)
    assert Path(found) == snapshot
    config = hf_hub_download(REPO_ID, "config.json", cache_dir=env["HF_HUB_CACHE"], local_files_only=True)
    assert Path(config).read_bytes() == (MODEL_DIR / "config.json").read_bytes()

    # Everything is cached now: nothing is fetched again.
    hub.requests.clear()
    again = canrun(canrun_bin, env, "pull", REPO_ID)
    assert again.returncode == 0 and "(0 fetched" in again.stderr, again.stderr
    assert not [r for r in hub.requests if r[1].startswith("/cdn/")]


def test_what_huggingface_hub_fetched_is_used_offline(canrun_bin, run_canrun, hub, env, monkeypatch):
    from huggingface_hub import snapshot_download
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    # huggingface_hub reads HF_ENDPOINT when it is imported; pass the endpoint explicitly too.
    folder = subprocess.run(
        ["python3", "-c", "import sys; from huggingface_hub import snapshot_download; "
         "print(snapshot_download(sys.argv[1], cache_dir=sys.argv[2]))", REPO_ID, env["HF_HUB_CACHE"]],
        capture_output=True, text=True, env=env, timeout=120)
    assert folder.returncode == 0, folder.stderr
    offline = dict(env, HF_HUB_OFFLINE="1")
    pulled = canrun(canrun_bin, offline, "pull", REPO_ID)
    assert pulled.returncode == 0, pulled.stderr
    assert Path(pulled.stdout.strip()) == Path(folder.stdout.strip().splitlines()[-1])
    generated = canrun(canrun_bin, dict(offline, CANRUN_CACHE_DIR=env["HF_HOME"] + "/plans"), "generate", REPO_ID,
                       "--prompt", "Hello", "--max-new-tokens", "4", "--backend", "ref")
    direct = run_canrun("generate", MODEL_DIR, "--prompt", "Hello", "--max-new-tokens", "4", "--backend", "ref")
    assert generated.returncode == 0, generated.stderr
    assert generated.stdout == direct.stdout


def test_a_hub_id_downloads_for_generate_and_tokenize(canrun_bin, hub, env):
    tokenized = canrun(canrun_bin, env, "tokenize", REPO_ID + "@v1", "--text", "Hello")
    assert tokenized.returncode == 0, tokenized.stderr
    refs = Path(env["HF_HUB_CACHE"]) / "models--tiny-org--tiny-llama" / "refs"
    assert (refs / "v1").read_text() != hub.repos[REPO_ID].commit  # the tag's own commit
    offline = canrun(canrun_bin, dict(env, HF_HUB_OFFLINE="1"), "tokenize", REPO_ID, "--text", "Hello")
    assert offline.returncode != 0 and "HF_HUB_OFFLINE" in offline.stderr  # main was never fetched


def test_an_interrupted_download_resumes_with_a_range_request(canrun_bin, hub, env):
    hub.cut_short = 1  # the first weights transfer drops halfway; the pull resumes it itself
    pulled = canrun(canrun_bin, env, "pull", REPO_ID, "--include", "*.safetensors")
    assert pulled.returncode == 0, pulled.stderr
    ranges = [r for r in hub.requests if r[1].startswith("/cdn/")]
    assert len(ranges) == 2 and ranges[0][2] is None and ranges[1][2].startswith("bytes="), ranges
    assert [b.name for b in blobs(env)] == [hub.repos[REPO_ID].etag("model.safetensors")]

    # A partial blob left by an earlier run that was killed is resumed from where it stopped.
    blob = blobs(env)[0]
    partial = Path(str(blob) + ".incomplete")
    partial.write_bytes(blob.read_bytes()[:1000])
    blob.unlink()
    hub.requests.clear()
    again = canrun(canrun_bin, env, "pull", REPO_ID, "--include", "*.safetensors")
    assert again.returncode == 0, again.stderr
    assert [r[2] for r in hub.requests if r[1].startswith("/cdn/")] == ["bytes=1000-"]
    assert blob.read_bytes() == (MODEL_DIR / "model.safetensors").read_bytes() and not partial.exists()


def test_server_errors_are_retried_then_named(canrun_bin, hub, env):
    hub.errors_500 = 2
    assert canrun(canrun_bin, env, "pull", REPO_ID).returncode == 0
    hub.errors_500 = 1000
    failed = canrun(canrun_bin, dict(env, HF_HUB_CACHE=env["HF_HUB_CACHE"] + "2"), "pull", REPO_ID)
    assert failed.returncode != 0
    assert failed.stderr.strip().splitlines()[-1] == \
        f"error: {REPO_ID}@main: the Hub answered HTTP 500 for the model's file list"


def test_a_corrupt_blob_is_discarded(canrun_bin, hub, env):
    hub.corrupt = True
    failed = canrun(canrun_bin, env, "pull", REPO_ID)
    assert failed.returncode != 0
    assert "'model.safetensors' arrived corrupt (its hash is " in failed.stderr, failed.stderr
    assert not [b for b in blobs(env) if b.name == hub.repos[REPO_ID].etag("model.safetensors")]
    assert not [b for b in blobs(env) if b.name.endswith(".incomplete")]


def test_a_gated_repository_says_what_to_do(canrun_bin, hub, env):
    refused = canrun(canrun_bin, env, "pull", GATED_ID)
    assert refused.returncode != 0
    assert "401 Unauthorized" in refused.stderr and "HF_TOKEN is not set" in refused.stderr
    assert f"{hub.url}/{GATED_ID}" in refused.stderr
    wrong = canrun(canrun_bin, dict(env, HF_TOKEN="hf_wrong"), "pull", GATED_ID)
    assert wrong.returncode != 0 and "403 Forbidden" in wrong.stderr and "request access" in wrong.stderr
    token_file = Path(env["HF_HOME"]) / "token"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    token_file.write_text(TOKEN)  # where `hf auth login` keeps it
    allowed = canrun(canrun_bin, env, "pull", GATED_ID)
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.parametrize("model, message", [
    ("not-an-id", "'not-an-id' is not a Hub model id: expected ORG/NAME[@REVISION]"),
    ("org/na--me", "'org/na--me' is not a Hub model id: \"--\" and \"..\" are not allowed"),
    ("tiny-org/missing", "tiny-org/missing: no such model repository at "),
    (REPO_ID + "@v9", f"{REPO_ID}: revision 'v9' does not exist"),
])
def test_bad_ids_and_revisions_are_one_line(canrun_bin, env, model, message):
    failed = canrun(canrun_bin, env, "pull", model)
    assert failed.returncode != 0
    assert len(failed.stderr.strip().splitlines()) == 1 and message in failed.stderr, failed.stderr


def test_offline_without_the_model_says_so(canrun_bin, env):
    failed = canrun(canrun_bin, dict(env, HF_HUB_OFFLINE="1"), "pull", REPO_ID)
    assert failed.returncode != 0 and "HF_HUB_OFFLINE is set" in failed.stderr


def test_a_full_disk_leaves_no_blob_and_a_usable_cache(canrun_bin, hub, env, tmp_path):
    cache = tmp_path / "small"
    cache.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(cache)], capture_output=True)
    if mounted.returncode != 0:
        pytest.fail(f"cannot mount a small tmpfs for this test (it needs root): {mounted.stderr!r}")
    try:
        full = dict(env, HF_HUB_CACHE=str(cache))
        failed = canrun(canrun_bin, full, "pull", REPO_ID)
        assert failed.returncode != 0
        [error] = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
        assert "No space left on device (make room and run again: the download resumes)" in error, failed.stderr
        blob_dir = cache / "models--tiny-org--tiny-llama" / "blobs"
        weights = hub.repos[REPO_ID].etag("model.safetensors")
        assert not (blob_dir / weights).exists()
        # Still a cache huggingface_hub reads: no ref to a half snapshot, nothing it calls corrupt.
        from huggingface_hub import scan_cache_dir
        assert scan_cache_dir(cache).warnings == []
        assert not (cache / "models--tiny-org--tiny-llama" / "refs" / "main").exists()
    finally:
        subprocess.run(["umount", str(cache)], check=True)


def test_check_downloads_a_hub_id_and_says_when_it_cannot(canrun_bin, hub, env, tmp_path):
    lab = dict(env, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    row = json.loads(canrun(canrun_bin, lab, "check", REPO_ID, "--json").stdout)
    assert row["result"] == "PASS" and row["weights"] == "real", row
    assert row["revision"] == hub.repos[REPO_ID].commit

    # The reproduce script's canrun part (after the clone and build) gets the same snapshot into
    # an empty cache and checks it again.
    script = row["reproduce_script"]
    commit = hub.repos[REPO_ID].commit
    assert f"build/canrun pull {REPO_ID}@{commit}\n" in script and f"hf download {REPO_ID} --revision {commit}" in script
    canrun_part = script.split("bash scripts/build.sh build\n", 1)[1]
    clone = tmp_path / "clone"
    (clone / "build").mkdir(parents=True)
    (clone / "build" / "canrun").symlink_to(canrun_bin)
    (clone / "part.sh").write_text("set -euo pipefail\n" + canrun_part)
    again = subprocess.run(["bash", "part.sh"], cwd=clone, capture_output=True, text=True, timeout=300,
                           env=dict(lab, HF_HUB_CACHE=str(tmp_path / "fresh-hub")))
    assert again.returncode == 0, again.stderr
    assert "result: PASS (expected PASS)" in again.stdout
    assert (tmp_path / "fresh-hub" / "models--tiny-org--tiny-llama" / "snapshots" / commit).is_dir()

    # Neither cached nor downloadable: a NOT_TESTED row that says why, with nothing measured.
    missing = canrun(canrun_bin, lab, "check", "tiny-org/missing", "--json")
    assert missing.returncode == 0, missing.stderr
    row = json.loads(missing.stdout)
    assert row["result"] == "NOT_TESTED" and row["error_type"] == "weights_unavailable"
    assert "tiny-org/missing: no such model repository at " in row["error_message"]
    assert row["weights"] is None and row["wall_time_s"] is None
