"""`canrun cache`: pull from a folder and over HTTP, ls, rm, prune, push over HTTP (PUT), and
errors that name the digest, URL or option at fault."""
import functools
import http.server
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
import xxhash


@pytest.fixture(scope="session")
def version(canrun_bin):
    return subprocess.run([canrun_bin, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]


def digest(key):
    # The canonical JSON nlohmann::json writes: sorted keys, no spaces.
    return xxhash.xxh3_128_hexdigest(json.dumps(key, sort_keys=True, separators=(",", ":")).encode())


def plan_key(version, shard):
    return {"kind": "weights", "compiler_version": version, "isa": "portable", "backend": "cpu",
            "config_fingerprint": "c0ffee", "weights_fingerprint": "beef", "shapes": "", "shard": shard,
            "program": "5eed"}


def make_remote(base: Path, version: str, shards=("tp2.rank0", "tp2.rank1")):
    """A shared folder in the remote layout, one entry per shard; returns their digests."""
    entries = []
    for number, shard in enumerate(shards):
        key = plan_key(version, shard)
        entry_digest = digest(key)
        folder = base / version / entry_digest
        folder.mkdir(parents=True)
        data = bytes([number + 1]) * (5000 + number)
        (folder / "weights.bin").write_bytes(data)
        manifest = {"format": 1, "digest": entry_digest, "key": key, "label": "tiny-llama",
                    "created": "2026-01-01T00:00:00Z",
                    "files": {"weights.bin": {"bytes": len(data), "xxh3": xxhash.xxh3_64_hexdigest(data)}}}
        (folder / "manifest.json").write_text(json.dumps(manifest))
        entries.append({"digest": entry_digest, "manifest": manifest})
    (base / version / "index.json").write_text(json.dumps({"compiler_version": version, "entries": entries}))
    return [entry["digest"] for entry in entries]


def ls_json(run_canrun, cache):
    result = run_canrun("cache", "ls", "--json", "--verify", "--cache-dir", cache)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


class PutHandler(http.server.SimpleHTTPRequestHandler):
    """GET from the folder, PUT into it."""

    def do_PUT(self):
        path = Path(self.translate_path(self.path))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def http_folder(tmp_path):
    folder = tmp_path / "served"
    folder.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(PutHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}/plans"
    server.shutdown()
    server.server_close()


def test_pull_ls_rm_prune(run_canrun, tmp_path, version):
    remote = tmp_path / "shared"
    digests = make_remote(remote, version)
    cache = tmp_path / "cache"
    result = run_canrun("cache", "pull", remote, "--cache-dir", cache)
    assert result.returncode == 0, result.stderr
    assert "pulled 2 entries" in result.stdout
    assert "pulled 0 entries" in run_canrun("cache", "pull", remote, "--cache-dir", cache).stdout

    listing = ls_json(run_canrun, cache)
    assert listing["root"] == str(cache) and listing["compiler_version"] == version
    assert sorted(entry["digest"] for entry in listing["entries"]) == sorted(digests)
    assert all(entry["ok"] and entry["label"] == "tiny-llama" for entry in listing["entries"])
    assert {entry["key"]["shard"] for entry in listing["entries"]} == {"tp2.rank0", "tp2.rank1"}

    table = run_canrun("cache", "ls", "--cache-dir", cache)
    assert table.returncode == 0, table.stderr
    assert "DIGEST" in table.stdout and "LAST USED" in table.stdout and digests[0][:12] in table.stdout
    assert "2 entries" in table.stdout

    removed = run_canrun("cache", "rm", digests[0][:8], "--cache-dir", cache)
    assert removed.returncode == 0, removed.stderr
    assert f"removed {digests[0]}" in removed.stdout
    assert [entry["digest"] for entry in ls_json(run_canrun, cache)["entries"]] == [digests[1]]

    # An entry of another compiler version goes on prune; the current one stays.
    make_remote(tmp_path / "old", "0.0.1", shards=("tp1.rank0",))
    old = next(path for path in (tmp_path / "old" / "0.0.1").iterdir() if path.is_dir())
    (cache / "0.0.1").mkdir()
    old.rename(cache / "0.0.1" / old.name)
    pruned = run_canrun("cache", "prune", "--cache-dir", cache)
    assert pruned.returncode == 0, pruned.stderr
    assert "compiler version 0.0.1" in pruned.stdout and "1 removed" in pruned.stdout
    assert not (cache / "0.0.1").exists()
    assert len(ls_json(run_canrun, cache)["entries"]) == 1


def test_push_and_pull_over_http(run_canrun, tmp_path, version, http_folder):
    served, url = http_folder
    digests = make_remote(tmp_path / "shared", version)
    cache = tmp_path / "cache"
    assert run_canrun("cache", "pull", tmp_path / "shared", "--cache-dir", cache).returncode == 0
    pushed = run_canrun("cache", "push", url, "--cache-dir", cache, "--header", "X-Team: plans")
    assert pushed.returncode == 0, pushed.stderr
    assert "pushed 2 entries" in pushed.stdout
    index = json.loads((served / "plans" / version / "index.json").read_text())
    assert sorted(entry["digest"] for entry in index["entries"]) == sorted(digests)

    fresh = tmp_path / "fresh"
    pulled = run_canrun("cache", "pull", url, "--cache-dir", fresh)
    assert pulled.returncode == 0, pulled.stderr
    assert "pulled 2 entries" in pulled.stdout
    assert sorted(entry["digest"] for entry in ls_json(run_canrun, fresh)["entries"]) == sorted(digests)


def test_cache_dir_comes_from_the_environment(canrun_bin, tmp_path):
    env = dict(os.environ, CANRUN_CACHE_DIR=str(tmp_path / "env-cache"))
    result = subprocess.run([canrun_bin, "cache", "ls"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert f"plan cache {tmp_path / 'env-cache'} " in result.stdout and "0 entries" in result.stdout


def test_corrupt_remote_file_installs_nothing(run_canrun, tmp_path, version):
    remote = tmp_path / "shared"
    digests = make_remote(remote, version)
    weights = remote / version / digests[1] / "weights.bin"
    data = bytearray(weights.read_bytes())
    data[100] ^= 1
    weights.write_bytes(bytes(data))
    result = run_canrun("cache", "pull", remote, "--cache-dir", tmp_path / "cache")
    assert result.returncode == 1
    assert f"{digests[1]}/weights.bin: xxh3" in result.stderr and "nothing was installed" in result.stderr
    assert ls_json(run_canrun, tmp_path / "cache")["entries"] == []


@pytest.mark.parametrize("args, code, named", [
    (["cache", "rm", "ffff"], 2, '"ffff"'),
    (["cache", "rm", "XYZ"], 2, "XYZ"),
    (["cache", "rm"], 2, "--all"),
    (["cache", "pull", "http://127.0.0.1:9/plans"], 1, "/index.json: cannot connect"),
    (["cache", "pull", "ftp://example.com/plans"], 2, "ftp://example.com/plans"),
    (["cache", "pull", "{tmp}/nowhere"], 1, "nowhere/"),
    (["cache", "prune", "--older-than", "-1"], 2, "--older-than"),
    (["cache", "prune", "--max-size-mib", "lots"], 2, '"lots" is not a size in MiB'),
    (["cache", "ls", "--bogus"], 2, "--bogus"),
    (["cache", "push", "http://127.0.0.1:9/plans", "--header", "NoColon"], 2, "NoColon"),
])
def test_bad_inputs_name_the_thing_at_fault(run_canrun, tmp_path, args, code, named):
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    result = run_canrun(*args, "--cache-dir", tmp_path / "cache")
    assert result.returncode == code, result.stdout + result.stderr
    assert named in result.stderr, result.stderr


def test_help_explains_each_subcommand(run_canrun):
    result = run_canrun("cache", "--help")
    assert result.returncode == 0
    for subcommand in ("ls", "rm", "prune", "pull", "push"):
        assert subcommand in result.stdout
